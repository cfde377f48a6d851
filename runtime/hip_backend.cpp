#include "runtime/hip_backend.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/prebuilt_amd.hpp"
#include "core/check.hpp"
#include "core/log.hpp"
#include "runtime/hip_device_query.hpp"

namespace mqajit {

HipBackend::Libraries HipBackend::default_libraries() {
    return {.runtime = HipApi::default_candidates(),
            .hiprtc = HiprtcApi::default_candidates(),
            .clang = ClangHipCompiler::default_candidates()};
}

HipBackend::HipBackend(Libraries libraries)
    : libraries_(std::move(libraries)), kernel_source_([this]() -> const Compiler& { return runtime_compiler(); }) {}

const Compiler& HipBackend::compiler() const {
    const std::lock_guard lock(compiler_mutex_);
    // NOTES: a failed search is not remembered: clang may be installed between calls.
    if (compiler_ == nullptr) compiler_ = std::make_unique<ClangHipCompiler>(libraries_.clang);
    return *compiler_;
}

const Compiler& HipBackend::runtime_compiler() const {
    const std::lock_guard lock(compiler_mutex_);
    if (runtime_compiler_ == nullptr) {
        runtime_compiler_ = std::make_unique<HiprtcCompiler>(HiprtcApi::load(libraries_.hiprtc));
    }
    return *runtime_compiler_;
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
        try {
            int version = 0;
            hip_check(api, api.hipRuntimeGetVersion(&version), "hipRuntimeGetVersion");
            std::vector<std::string> devices;
            for (int ordinal = 0; ordinal < count; ++ordinal) devices.push_back(describe(query_hip_device(api, ordinal)));
            runtime_.device_count = count;
            runtime_.status = {.available = true,
                               .message = fmt::format("HIP runtime {}, {} device(s): {}", format_hip_version(version),
                                                      count, fmt::join(devices, ", "))};
        } catch (const Error& e) {
            runtime_.status = {.available = false, .message = fmt::format("HIP runtime found but unusable: {}", e.what())};
        }
    });
    return runtime_;
}

DriverStatus HipBackend::driver_status() const { return runtime().status; }

int HipBackend::device_count() const { return runtime().device_count; }

std::shared_ptr<Device> HipBackend::open_device(int ordinal) {
    MQAJIT_CHECK(ordinal >= 0, "device ordinal {} is negative", ordinal);
    const Runtime& state = runtime();
    MQAJIT_CHECK_KIND(not_found, state.status.available, "no AMD device to open: {}", state.status.message);
    MQAJIT_CHECK(ordinal < state.device_count, "AMD device {} does not exist; this machine has {} (ordinals 0 to {})",
                 ordinal, state.device_count, state.device_count - 1);
    const std::lock_guard lock(devices_mutex_);
    std::shared_ptr<HipDevice>& device = devices_[ordinal];
    if (device == nullptr) {
        device = std::make_shared<HipDevice>(state.api, ordinal);
        log().debug("opened AMD device {}: {} ({}, {} CUs, {} bytes LDS per workgroup)", ordinal, device->name(),
                    device->arch(), device->multiprocessor_count(), device->max_shared_bytes_per_block());
    }
    return device;
}

std::shared_ptr<Device> HipBackend::current_device() {
    const Runtime& state = runtime();
    MQAJIT_CHECK_KIND(not_found, state.status.available, "no AMD device: {}", state.status.message);
    int ordinal = 0;
    hip_check(*state.api, state.api->hipGetDevice(&ordinal), "hipGetDevice");
    return open_device(ordinal);
}

std::shared_ptr<LoadedKernel> HipBackend::generated_kernel(KernelCache& cache, Device& device, const Variant& variant,
                                                           int heads, int head_dim) const {
    return kernel_source_.get(cache, device, variant, heads, head_dim);
}

BaselineKernel HipBackend::baseline(const Arch& arch, int heads, int head_dim) const {
    PrebuiltBaseline baseline = prebuilt_amd_baseline(arch, heads, head_dim);
    return {baseline.variant, {prebuilt_amd_code_object(arch), std::move(baseline.kernel_name)}};
}

PrebuiltKernel HipBackend::reference(const Arch& arch) const {
    return {prebuilt_amd_code_object_for(arch), kReferenceKernelName};
}

BaselineKernel HipBackend::paged_baseline(const Arch& arch, const PagedProblemShape& shape) const {
    PrebuiltBaseline baseline = prebuilt_amd_paged_baseline(arch, shape);
    return {baseline.variant, {prebuilt_amd_code_object(arch), std::move(baseline.kernel_name)}};
}

PrebuiltKernel HipBackend::paged_reference(const Arch& arch) const {
    return {prebuilt_amd_code_object_for(arch), kPagedReferenceKernelName};
}

PrebuiltKernel HipBackend::topk_kernel(const Arch& arch, const char*) const {
    throw Error(ErrorKind::unsupported,
                fmt::format("mqa_topk has no AMD kernels yet; this device is {} (it runs on NVIDIA GPUs)", arch.name));
}

}  // namespace mqajit
