#include "runtime/hip_backend.hpp"

#include <fmt/format.h>

#include "core/check.hpp"

namespace mqajit {

HipBackend::Libraries HipBackend::default_libraries() {
    return {.runtime = HipApi::default_candidates(), .clang = ClangHipCompiler::default_candidates()};
}

HipBackend::HipBackend(Libraries libraries) : libraries_(std::move(libraries)) {}

const Compiler& HipBackend::compiler() const {
    const std::lock_guard lock(compiler_mutex_);
    // NOTES: a failed search is not remembered: clang may be installed between calls. At run time
    // on a ROCm machine hiprtc would be the natural choice, but Debian's hiprtc 5.2 crashes on
    // gfx94x/gfx95x, so the code objects come from clang ahead of time either way.
    if (compiler_ == nullptr) compiler_ = std::make_unique<ClangHipCompiler>(libraries_.clang);
    return *compiler_;
}

const HipBackend::Runtime& HipBackend::runtime() const {
    std::call_once(runtime_once_, [this] {
        try {
            runtime_.api = HipApi::load(libraries_.runtime);
        } catch (const Error& e) {
            runtime_.status = {.available = false, .message = fmt::format("no HIP runtime: {}", e.what())};
            return;
        }
        const HipApi& api = *runtime_.api;
        const HipError initialised = api.hipInit(0);
        int count = 0;
        if (initialised == kHipErrorNoDevice ||
            (initialised == kHipSuccess && (api.hipGetDeviceCount(&count) != kHipSuccess || count == 0))) {
            runtime_.status = {.available = false,
                               .message = fmt::format("HIP runtime found ({}) but no AMD GPU", api.library_path())};
            return;
        }
        if (initialised != kHipSuccess) {
            runtime_.status = {.available = false,
                               .message = fmt::format("HIP runtime found ({}) but hipInit failed: {}",
                                                      api.library_path(), api.describe(initialised))};
            return;
        }
        runtime_.gpu_count = count;
        runtime_.status = {.available = false,
                           .message = fmt::format("HIP runtime found ({}) with {} AMD GPU(s), but this build cannot "
                                                  "run kernels on AMD GPUs yet (ahead-of-time code objects only)",
                                                  api.library_path(), count)};
    });
    return runtime_;
}

DriverStatus HipBackend::driver_status() const { return runtime().status; }

int HipBackend::device_count() const { return 0; }

void HipBackend::refuse_device() const {
    const Runtime& state = runtime();
    MQAJIT_CHECK_KIND(not_found, state.api != nullptr && state.gpu_count > 0, "no AMD device to open: {}",
                      state.status.message);
    MQAJIT_FAIL(unsupported,
                "running kernels on AMD GPUs is not implemented in this build (HIP module load and launch are "
                "missing); use `mqajit aot --arch gfx950` for code objects, or an NVIDIA GPU to run");
}

std::shared_ptr<Device> HipBackend::open_device(int ordinal) {
    MQAJIT_CHECK(ordinal >= 0, "device ordinal {} is negative", ordinal);
    refuse_device();
}

std::shared_ptr<Device> HipBackend::current_device() { refuse_device(); }

}  // namespace mqajit
