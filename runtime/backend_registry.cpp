#include "core/check.hpp"
#include "runtime/backend.hpp"
#include "runtime/cuda_backend.hpp"
#include "runtime/hip_backend.hpp"

namespace mqajit {
namespace {

// NOTES: this is the only file that names each backend. Each is created on first use, so a
// process that never asks for one opens no vendor library.
CudaBackend& cuda_backend() {
    static CudaBackend backend;
    return backend;
}

HipBackend& hip_backend() {
    static HipBackend backend;
    return backend;
}

}  // namespace

Backend& backend_for(Vendor vendor) {
    switch (vendor) {
        case Vendor::nvidia: return cuda_backend();
        case Vendor::amd: return hip_backend();
    }
    MQAJIT_FAIL(internal, "unknown vendor {}", static_cast<int>(vendor));
}

Backend& backend_for(const Arch& arch) { return backend_for(arch.vendor); }

std::vector<Backend*> all_backends() { return {&cuda_backend(), &hip_backend()}; }

Backend& live_backend() {
    // NOTES: ROCm is opened only where CUDA sees no device, so an NVIDIA machine never loads it.
    if (cuda_backend().device_count() > 0) return cuda_backend();
    if (hip_backend().device_count() > 0) return hip_backend();
    return cuda_backend();
}

}  // namespace mqajit
