#pragma once
// The AMD backend: clang (offline) for compiling code objects with no GPU, hiprtc for compiling at
// run time, and the HIP runtime for devices. ROCm's libraries are opened at run time; a missing
// runtime is a normal state reported by driver_status() in one line.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/backend.hpp"
#include "runtime/compiler_clang_hip.hpp"
#include "runtime/compiler_hiprtc.hpp"
#include "runtime/hip_api.hpp"
#include "runtime/hip_device.hpp"
#include "runtime/hip_kernel_source.hpp"

namespace mqajit {

class HipBackend final : public Backend {
public:
    struct Libraries {
        std::vector<std::string> runtime;  // tried in order for libamdhip64
        std::vector<std::string> hiprtc;   // tried in order for libhiprtc
        std::vector<std::string> clang;    // tried in order for the offline compiler
    };
    static Libraries default_libraries();

    explicit HipBackend(Libraries libraries = default_libraries());

    std::string name() const override { return "hip"; }
    Vendor vendor() const override { return Vendor::amd; }
    // The offline clang compiler (code objects for gfx942/gfx950 without a GPU or ROCm): what
    // `mqajit aot` uses.
    const Compiler& compiler() const override;
    // hiprtc, what dispatch compiles with on an AMD device; throws Error(not_found) without libhiprtc
    // and Error(unsupported) for a hiprtc older than 6.0.
    const Compiler& runtime_compiler() const override;
    DriverStatus driver_status() const override;
    int device_count() const override;
    std::shared_ptr<Device> open_device(int ordinal) override;
    // The HIP runtime's current device of the calling thread (device 0 unless the program chose).
    std::shared_ptr<Device> current_device() override;

    // A code object `mqajit aot` left in the disk cache, else hiprtc (HipKernelSource).
    std::shared_ptr<LoadedKernel> generated_kernel(KernelCache& cache, Device& device, const Variant& variant,
                                                   int heads, int head_dim) const override;
    // The clang-22 code objects' (codegen/prebuilt_amd/), for both operators.
    BaselineKernel baseline(const Arch& arch, int heads, int head_dim) const override;
    PrebuiltKernel reference(const Arch& arch) const override;
    BaselineKernel paged_baseline(const Arch& arch, const PagedProblemShape& shape) const override;
    PrebuiltKernel paged_reference(const Arch& arch) const override;
    PrebuiltKernel topk_kernel(const Arch& arch, const char* kernel_name) const override;

private:
    struct Runtime {
        std::shared_ptr<const HipApi> api;  // null when the library could not be used
        DriverStatus status;
        int device_count = 0;
    };
    // Loads the runtime and calls hipInit once; never throws.
    const Runtime& runtime() const;

    Libraries libraries_;
    mutable std::once_flag runtime_once_;
    mutable Runtime runtime_;
    mutable std::mutex compiler_mutex_;
    mutable std::unique_ptr<ClangHipCompiler> compiler_;
    mutable std::unique_ptr<HiprtcCompiler> runtime_compiler_;
    mutable HipKernelSource kernel_source_;
    std::mutex devices_mutex_;
    std::map<int, std::shared_ptr<HipDevice>> devices_;
};

}  // namespace mqajit
