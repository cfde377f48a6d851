#include "core/check.hpp"
#include "runtime/backend.hpp"
#include "runtime/cuda_backend.hpp"

namespace mqajit {
namespace {

// NOTES: this is the only file that names each backend. Each is created on first use, so a
// process that never asks for one opens no vendor library.
CudaBackend& cuda_backend() {
    static CudaBackend backend;
    return backend;
}

}  // namespace

Backend& backend_for(Vendor vendor) {
    switch (vendor) {
        case Vendor::nvidia: return cuda_backend();
        case Vendor::amd:
            MQAJIT_FAIL(unsupported,
                        "the HIP backend is not built yet, so AMD archs (gfx942, gfx950) can be neither compiled "
                        "nor run by this build; use an NVIDIA arch such as sm_90a");
    }
    MQAJIT_FAIL(internal, "unknown vendor {}", static_cast<int>(vendor));
}

Backend& backend_for(const Arch& arch) { return backend_for(arch.vendor); }

std::vector<Backend*> all_backends() { return {&cuda_backend()}; }

}  // namespace mqajit
