#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.hpp"
#include "runtime/backend.hpp"
#include "runtime/hip_backend.hpp"
#if MQAJIT_WITH_CUDA
#include "runtime/cuda_backend.hpp"
#endif

namespace mqajit {
namespace {

// NOTES: this is the only file that names each backend. Each is created on first use, so a
// process that never asks for one opens no vendor library.
#if MQAJIT_WITH_CUDA
CudaBackend& cuda_backend() {
    static CudaBackend backend;
    return backend;
}
#endif

HipBackend& hip_backend() {
    static HipBackend backend;
    return backend;
}

}  // namespace

Backend& backend_for(Vendor vendor) {
    switch (vendor) {
        case Vendor::nvidia:
#if MQAJIT_WITH_CUDA
            return cuda_backend();
#else
            MQAJIT_FAIL(unsupported, "this build of mqajit has no CUDA backend (it was configured with "
                                     "MQAJIT_WITH_CUDA=OFF or without the CUDA toolkit); rebuild with the toolkit "
                                     "for NVIDIA GPUs");
#endif
        case Vendor::amd: return hip_backend();
    }
    MQAJIT_FAIL(internal, "unknown vendor {}", static_cast<int>(vendor));
}

Backend& backend_for(const Arch& arch) { return backend_for(arch.vendor); }

std::vector<Backend*> all_backends() {
#if MQAJIT_WITH_CUDA
    return {&cuda_backend(), &hip_backend()};
#else
    return {&hip_backend()};
#endif
}

Backend& live_backend() {
    // NOTES: ROCm is opened only where CUDA sees no device, so an NVIDIA machine never loads it.
    for (Backend* backend : all_backends()) {
        if (backend->device_count() > 0) return *backend;
    }
    return *all_backends().front();
}

DriverStatus live_driver_status() {
    std::vector<std::string> reasons;
    for (Backend* backend : all_backends()) {
        DriverStatus status = backend->driver_status();
        if (status.available) return status;
        reasons.push_back(std::move(status.message));
    }
    return {.available = false, .message = fmt::format("no GPU: {}", fmt::join(reasons, "; "))};
}

}  // namespace mqajit
