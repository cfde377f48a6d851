#pragma once
// The NVIDIA backend: NVRTC for compiling (no GPU needed) and the driver API for devices. Both
// libraries are opened at run time; a missing driver is a normal state reported by driver_status().

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/backend.hpp"
#include "runtime/compiler_nvrtc.hpp"
#include "runtime/cuda_device.hpp"

namespace mqajit {

class CudaBackend final : public Backend {
public:
    struct Libraries {
        std::vector<std::string> driver;  // tried in order for libcuda
        std::vector<std::string> nvrtc;   // tried in order for libnvrtc
    };
    // CudaDriverApi::default_candidates() and NvrtcApi::default_candidates() (MQAJIT_* settings first).
    static Libraries default_libraries();

    explicit CudaBackend(Libraries libraries = default_libraries());

    std::string name() const override { return "cuda"; }
    Vendor vendor() const override { return Vendor::nvidia; }
    // NVRTC, both ahead of time and at run time (it needs no GPU).
    const Compiler& compiler() const override;
    const Compiler& runtime_compiler() const override { return compiler(); }
    DriverStatus driver_status() const override;
    int device_count() const override;
    std::shared_ptr<Device> open_device(int ordinal) override;
    std::shared_ptr<Device> current_device() override;

    std::shared_ptr<LoadedKernel> generated_kernel(KernelCache& cache, Device& device, const Variant& variant,
                                                   int heads, int head_dim) const override;
    // The nvcc fatbin's (codegen/prebuilt/).
    BaselineKernel baseline(const Arch& arch, int heads, int head_dim) const override;
    PrebuiltKernel reference(const Arch& arch) const override;
    BaselineKernel paged_baseline(const Arch& arch, const PagedProblemShape& shape) const override;
    PrebuiltKernel paged_reference(const Arch& arch) const override;
    PrebuiltKernel topk_kernel(const Arch& arch, const char* kernel_name) const override;

private:
    struct Driver {
        std::shared_ptr<const CudaDriverApi> api;  // null when the library could not be used
        DriverStatus status;
        int device_count = 0;
    };
    // Loads the driver and calls cuInit once; never throws.
    const Driver& driver() const;
    std::shared_ptr<CudaDevice> open_cuda_device(int ordinal);

    Libraries libraries_;
    mutable std::once_flag driver_once_;
    mutable Driver driver_;
    mutable std::mutex compiler_mutex_;
    mutable std::unique_ptr<NvrtcCompiler> compiler_;
    std::mutex devices_mutex_;
    std::map<int, std::shared_ptr<CudaDevice>> devices_;
};

}  // namespace mqajit
