#pragma once
// The AMD backend: clang (offline) for compiling code objects with no GPU, and the HIP runtime,
// opened at run time, for devices. A missing runtime is a normal state reported by driver_status().
//
// NOTES: what is not built yet says so: running kernels on an AMD GPU (HipDevice: module load and
// launch through hipModuleLaunchKernel) is not implemented, so open_device() throws
// Error(unsupported) even where a HIP runtime answers; nothing here pretends a device works.

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/backend.hpp"
#include "runtime/compiler_clang_hip.hpp"
#include "runtime/hip_api.hpp"

namespace mqajit {

class HipBackend final : public Backend {
public:
    struct Libraries {
        std::vector<std::string> runtime;  // tried in order for libamdhip64
        std::vector<std::string> clang;    // tried in order for the offline compiler
    };
    static Libraries default_libraries();

    explicit HipBackend(Libraries libraries = default_libraries());

    std::string name() const override { return "hip"; }
    Vendor vendor() const override { return Vendor::amd; }
    // The offline clang compiler (code objects for gfx942/gfx950 without a GPU or ROCm).
    const Compiler& compiler() const override;
    DriverStatus driver_status() const override;
    int device_count() const override;  // 0: no AMD device can be opened by this build
    std::shared_ptr<Device> open_device(int ordinal) override;
    std::shared_ptr<Device> current_device() override;

private:
    struct Runtime {
        std::shared_ptr<const HipApi> api;  // null when the library could not be used
        DriverStatus status;
        int gpu_count = 0;                  // what the runtime reported
    };
    // Loads the runtime and calls hipInit once; never throws.
    const Runtime& runtime() const;
    [[noreturn]] void refuse_device() const;

    Libraries libraries_;
    mutable std::once_flag runtime_once_;
    mutable Runtime runtime_;
    mutable std::mutex compiler_mutex_;
    mutable std::unique_ptr<ClangHipCompiler> compiler_;
};

}  // namespace mqajit
