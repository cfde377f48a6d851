#include "runtime/cuda_backend.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/prebuilt.hpp"
#include "core/check.hpp"
#include "core/log.hpp"
#include "runtime/kernel_request.hpp"

namespace mqajit {
namespace {

// "NVIDIA H200 (sm_90a, 132 SMs)", from attributes alone: no context is created for the summary.
std::string describe_device(const CudaDriverApi& api, int ordinal) {
    CUdevice device = 0;
    cuda_check(api, api.cuDeviceGet(&device, ordinal), fmt::format("cuDeviceGet({})", ordinal));
    char name[256] = {};
    cuda_check(api, api.cuDeviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName");
    int major = 0, minor = 0, multiprocessors = 0;
    cuda_check(api, api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
               "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
    cuda_check(api, api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
               "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
    cuda_check(api, api.cuDeviceGetAttribute(&multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
               "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
    return fmt::format("{} ({}, {} SMs)", name, arch_for_compute_capability(major, minor), multiprocessors);
}

}  // namespace

CudaBackend::Libraries CudaBackend::default_libraries() {
    return {.driver = CudaDriverApi::default_candidates(), .nvrtc = NvrtcApi::default_candidates()};
}

CudaBackend::CudaBackend(Libraries libraries) : libraries_(std::move(libraries)) {}

const Compiler& CudaBackend::compiler() const {
    const std::lock_guard lock(compiler_mutex_);
    // NOTES: a failed load is not remembered: NVRTC may be installed or configured between calls,
    // and the caller that hits the error logs it once.
    if (compiler_ == nullptr) compiler_ = std::make_unique<NvrtcCompiler>(NvrtcApi::load(libraries_.nvrtc));
    return *compiler_;
}

const CudaBackend::Driver& CudaBackend::driver() const {
    std::call_once(driver_once_, [this] {
        try {
            driver_.api = CudaDriverApi::load(libraries_.driver);
        } catch (const Error& e) {
            driver_.status = {.available = false, .message = e.what()};  // "no CUDA driver: tried ..."
            return;
        }
        const CudaDriverApi& api = *driver_.api;
        const CUresult initialised = api.cuInit(0);
        if (initialised == CUDA_ERROR_NO_DEVICE) {
            driver_.status = {.available = false,
                              .message = fmt::format("CUDA driver found but no device ({})", api.library_path())};
            return;
        }
        if (initialised != CUDA_SUCCESS) {
            driver_.status = {.available = false,
                              .message = fmt::format("CUDA driver found ({}) but cuInit failed: {}", api.library_path(),
                                                     api.describe(initialised))};
            return;
        }
        try {
            int version = 0;
            cuda_check(api, api.cuDriverGetVersion(&version), "cuDriverGetVersion");
            int count = 0;
            cuda_check(api, api.cuDeviceGetCount(&count), "cuDeviceGetCount");
            if (count == 0) {
                driver_.status = {.available = false,
                                  .message = fmt::format("CUDA driver {} found but no device", format_cuda_version(version))};
                return;
            }
            std::vector<std::string> devices;
            for (int ordinal = 0; ordinal < count; ++ordinal) devices.push_back(describe_device(api, ordinal));
            driver_.device_count = count;
            driver_.status = {.available = true,
                              .message = fmt::format("CUDA driver {}, {} device(s): {}", format_cuda_version(version),
                                                     count, fmt::join(devices, ", "))};
        } catch (const Error& e) {
            driver_.device_count = 0;
            driver_.status = {.available = false, .message = fmt::format("CUDA driver found but unusable: {}", e.what())};
        }
    });
    return driver_;
}

DriverStatus CudaBackend::driver_status() const { return driver().status; }

int CudaBackend::device_count() const { return driver().device_count; }

std::shared_ptr<CudaDevice> CudaBackend::open_cuda_device(int ordinal) {
    const Driver& state = driver();
    MQAJIT_CHECK_KIND(not_found, state.status.available, "no CUDA device to open: {}", state.status.message);
    MQAJIT_CHECK(ordinal >= 0 && ordinal < state.device_count,
                 "CUDA device {} does not exist; this machine has {} (ordinals 0 to {})", ordinal, state.device_count,
                 state.device_count - 1);
    const std::lock_guard lock(devices_mutex_);
    std::shared_ptr<CudaDevice>& device = devices_[ordinal];
    if (device == nullptr) {
        device = std::make_shared<CudaDevice>(state.api, ordinal);
        log().debug("opened CUDA device {}: {} ({}, {} SMs, {} bytes shared per block)", ordinal, device->name(),
                    device->arch(), device->multiprocessor_count(), device->max_shared_bytes_per_block());
    }
    return device;
}

std::shared_ptr<Device> CudaBackend::open_device(int ordinal) { return open_cuda_device(ordinal); }

std::shared_ptr<Device> CudaBackend::current_device() {
    const Driver& state = driver();
    MQAJIT_CHECK_KIND(not_found, state.status.available, "no CUDA device: {}", state.status.message);
    const CudaDriverApi& api = *state.api;
    CUcontext current = nullptr;
    cuda_check(api, api.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    if (current == nullptr) {
        auto device = open_cuda_device(0);
        device->make_current();
        return device;
    }
    {
        const std::lock_guard lock(devices_mutex_);
        for (const auto& [ordinal, device] : devices_) {
            if (device->context() == current) return device;
        }
    }
    CUdevice current_device = 0;
    cuda_check(api, api.cuCtxGetDevice(&current_device), "cuCtxGetDevice");
    for (int ordinal = 0; ordinal < state.device_count; ++ordinal) {
        CUdevice candidate = 0;
        cuda_check(api, api.cuDeviceGet(&candidate, ordinal), fmt::format("cuDeviceGet({})", ordinal));
        if (candidate != current_device) continue;
        auto device = open_cuda_device(ordinal);
        // NOTES: kernels are loaded into primary contexts (as the CUDA runtime and PyTorch use);
        // a module of one context cannot be launched from another, so say so before launching.
        MQAJIT_CHECK_KIND(unsupported, device->context() == current,
                          "the current CUDA context is not device {}'s primary context; mqajit runs in primary "
                          "contexts (those the CUDA runtime uses): make the primary context current",
                          ordinal);
        return device;
    }
    MQAJIT_FAIL(internal, "the current CUDA context's device {} matches none of the {} devices the driver lists",
                static_cast<int>(current_device), state.device_count);
}

std::shared_ptr<LoadedKernel> CudaBackend::generated_kernel(KernelCache& cache, Device& device, const Variant& variant,
                                                            int heads, int head_dim) const {
    const Arch arch = Arch::parse(device.arch());
    const Compiler& nvrtc = compiler();
    return cache.get(device, nvrtc, kernel_key_for(variant, heads, head_dim, arch, nvrtc),
                     [&] { return compile_request_for(variant, heads, head_dim, arch); });
}

BaselineKernel CudaBackend::baseline(const Arch& arch, int heads, int head_dim) const {
    PrebuiltBaseline baseline = prebuilt_baseline(arch, heads, head_dim);
    return {baseline.variant, {prebuilt_fatbin(), std::move(baseline.kernel_name)}};
}

PrebuiltKernel CudaBackend::reference(const Arch&) const { return {prebuilt_fatbin(), kReferenceKernelName}; }

BaselineKernel CudaBackend::paged_baseline(const Arch& arch, const PagedProblemShape& shape) const {
    PrebuiltBaseline baseline = prebuilt_paged_baseline(arch, shape);
    return {baseline.variant, {prebuilt_paged_fatbin(), std::move(baseline.kernel_name)}};
}

PrebuiltKernel CudaBackend::paged_reference(const Arch&) const {
    return {prebuilt_paged_fatbin(), kPagedReferenceKernelName};
}

PrebuiltKernel CudaBackend::topk_kernel(const Arch&, const char* kernel_name) const {
    return {prebuilt_topk_fatbin(), kernel_name};
}

}  // namespace mqajit
