#include "runtime/hip_device.hpp"

#include <fmt/format.h>

#include "core/check.hpp"
#include "runtime/arch_override.hpp"
#include "runtime/hip_code_object.hpp"
#include "runtime/launch_checks.hpp"

namespace mqajit {

HipDevice::HipDevice(std::shared_ptr<const HipApi> api, int ordinal)
    : device_{std::move(api), ordinal}, info_(query_hip_device(*device_.api, ordinal)) {
    int version = 0;
    hip_check(this->api(), this->api().hipRuntimeGetVersion(&version), "hipRuntimeGetVersion");
    runtime_version_ = format_hip_version(version);
}

std::shared_ptr<LoadedKernel> HipDevice::load(std::span<const char> binary, const std::string& kernel_name) {
    MQAJIT_CHECK(!binary.empty(), "cannot load kernel {} from an empty code object; compile it first", kernel_name);
    const std::optional<Arch> target = amdgpu_code_object_target(binary);
    if (target) {
        check_code_runs_on(*target, Arch::parse(info_.target_id), fmt::format("the code object of {}", kernel_name));
    }
    return std::make_shared<HipKernel>(device_, binary, kernel_name);
}

void HipDevice::launch(const LoadedKernel& kernel, const LaunchConfig& config, void* stream, const void* argument,
                       std::size_t argument_bytes) {
    const auto* hip_kernel = dynamic_cast<const HipKernel*>(&kernel);
    MQAJIT_CHECK(hip_kernel != nullptr, "kernel {} was not loaded by the HIP backend; load it with this device",
                 kernel.name());
    check_same_device(kernel, hip_kernel->ordinal() == ordinal(), hip_kernel->ordinal(), ordinal());
    check_launch_arguments(kernel, config, argument, argument_bytes);
    MQAJIT_CHECK(config.dynamic_shared_bytes <= info_.max_shared_bytes_per_block,
                 "kernel {} asks for {} bytes of LDS; {} allows at most {} per workgroup: choose a variant with fewer "
                 "LDS buffers or smaller tiles",
                 kernel.name(), config.dynamic_shared_bytes, info_.name, info_.max_shared_bytes_per_block);

    // NOTES: HIP has no programmatic dependent launch; config.programmatic_dependent_launch is
    // ignored and the kernel starts after the previous one, as without it.
    const ScopedHipDevice scope(device_);
    void* parameters[] = {const_cast<void*>(argument)};
    const HipError launched = api().hipModuleLaunchKernel(
        hip_kernel->function(), config.grid_x, config.grid_y, config.grid_z, config.block_x, config.block_y,
        config.block_z, static_cast<unsigned>(config.dynamic_shared_bytes), static_cast<HipStream>(stream), parameters,
        nullptr);
    if (launched != kHipSuccess) [[unlikely]] {
        hip_check(api(), launched,
                  fmt::format("hipModuleLaunchKernel({}, grid ({}, {}, {}), block ({}, {}, {}), {} bytes LDS)",
                              kernel.name(), config.grid_x, config.grid_y, config.grid_z, config.block_x,
                              config.block_y, config.block_z, config.dynamic_shared_bytes));
    }
}

void HipDevice::encode_tensor_map(const TensorMapRequest&, MqaTensorMap&) const {
    MQAJIT_FAIL(unsupported, "tensor maps (TMA) exist only on NVIDIA sm_90 and newer; {} ({}) has none, so the AMD "
                             "kernel families load through LDS instead",
                info_.name, info_.target_id);
}

void HipDevice::make_current() {
    hip_check(api(), api().hipSetDevice(ordinal()), fmt::format("hipSetDevice({})", ordinal()));
}

std::unique_ptr<DeviceBuffer> HipDevice::allocate(std::size_t bytes) { return std::make_unique<HipBuffer>(device_, bytes); }

void HipDevice::copy_to_device(void* dst, const void* src, std::size_t bytes, void* stream) {
    if (bytes == 0) return;
    const ScopedHipDevice scope(device_);
    if (stream == nullptr) {
        hip_check(api(), api().hipMemcpyHtoD(dst, src, bytes), fmt::format("hipMemcpyHtoD({} bytes)", bytes));
    } else {
        hip_check(api(), api().hipMemcpyHtoDAsync(dst, src, bytes, static_cast<HipStream>(stream)),
                  fmt::format("hipMemcpyHtoDAsync({} bytes)", bytes));
    }
}

void HipDevice::copy_to_host(void* dst, const void* src, std::size_t bytes) {
    if (bytes == 0) return;
    const ScopedHipDevice scope(device_);
    hip_check(api(), api().hipMemcpyDtoH(dst, src, bytes), fmt::format("hipMemcpyDtoH({} bytes)", bytes));
}

void HipDevice::copy_on_device(void* dst, const void* src, std::size_t bytes) {
    if (bytes == 0) return;
    const ScopedHipDevice scope(device_);
    hip_check(api(), api().hipMemcpyDtoD(dst, src, bytes), fmt::format("hipMemcpyDtoD({} bytes)", bytes));
}

void HipDevice::fill_u32(void* dst, std::uint32_t value, std::size_t count, void* stream) {
    if (count == 0) return;
    MQAJIT_CHECK(reinterpret_cast<std::uintptr_t>(dst) % 4 == 0, "fill_u32 needs a 4-byte aligned address, got {}", dst);
    const ScopedHipDevice scope(device_);
    const int word = static_cast<int>(value);  // hipMemsetD32 takes the 32 bits as an int
    if (stream == nullptr) {
        hip_check(api(), api().hipMemsetD32(dst, word, count), fmt::format("hipMemsetD32({} words)", count));
    } else {
        hip_check(api(), api().hipMemsetD32Async(dst, word, count, static_cast<HipStream>(stream)),
                  fmt::format("hipMemsetD32Async({} words)", count));
    }
}

void HipDevice::fill_bytes(void* dst, std::uint8_t value, std::size_t count, void* stream) {
    if (count == 0) return;
    const ScopedHipDevice scope(device_);
    if (stream == nullptr) {
        hip_check(api(), api().hipMemsetD8(dst, value, count), fmt::format("hipMemsetD8({} bytes)", count));
    } else {
        hip_check(api(), api().hipMemsetD8Async(dst, value, count, static_cast<HipStream>(stream)),
                  fmt::format("hipMemsetD8Async({} bytes)", count));
    }
}

void HipDevice::synchronize(void* stream) {
    if (stream != nullptr) {
        hip_check(api(), api().hipStreamSynchronize(static_cast<HipStream>(stream)), "hipStreamSynchronize");
        return;
    }
    const ScopedHipDevice scope(device_);
    hip_check(api(), api().hipDeviceSynchronize(), fmt::format("hipDeviceSynchronize(device {})", ordinal()));
}

std::unique_ptr<DeviceStream> HipDevice::create_stream() { return std::make_unique<HipStreamObject>(device_); }

std::unique_ptr<EventTimer> HipDevice::create_timer() { return std::make_unique<HipEventTimer>(device_); }

}  // namespace mqajit
