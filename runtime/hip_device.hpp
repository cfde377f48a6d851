#pragma once
// An AMD GPU seen through the HIP runtime: properties (gcnArchName with its feature flags), code
// object load and launch, memory and timing. Streams are hipStream_t, passed as MqaLogitsOptions::stream.

#include <memory>
#include <string>

#include "runtime/device.hpp"
#include "runtime/hip_device_query.hpp"
#include "runtime/hip_resources.hpp"

namespace mqajit {

class HipDevice final : public Device {
public:
    // Reads device `ordinal`'s properties; throws Error(driver).
    HipDevice(std::shared_ptr<const HipApi> api, int ordinal);

    // The full target ID, "gfx942:sramecc+:xnack-": Arch::parse keeps the flags in `features`, so
    // tuning lookups use "gfx942" while compiles and cache keys keep the flags.
    std::string arch() const override { return info_.target_id; }
    std::string name() const override { return info_.name; }
    int ordinal() const override { return device_.ordinal; }
    int multiprocessor_count() const override { return info_.compute_units; }
    std::size_t max_shared_bytes_per_block() const override { return info_.max_shared_bytes_per_block; }
    std::string driver_version() const override { return runtime_version_; }

    // Refuses (Error(unsupported)) a code object built for another target before HIP sees it.
    std::shared_ptr<LoadedKernel> load(std::span<const char> binary, const std::string& kernel_name) override;
    void launch(const LoadedKernel& kernel, const LaunchConfig& config, void* stream, const void* argument,
                std::size_t argument_bytes) override;
    // AMD GPUs have no TMA: Error(unsupported).
    void encode_tensor_map(const TensorMapRequest& request, MqaTensorMap& out) const override;
    void make_current() override;

    std::unique_ptr<DeviceBuffer> allocate(std::size_t bytes) override;
    void copy_to_device(void* dst, const void* src, std::size_t bytes, void* stream) override;
    void copy_to_host(void* dst, const void* src, std::size_t bytes) override;
    void copy_on_device(void* dst, const void* src, std::size_t bytes) override;
    void fill_u32(void* dst, std::uint32_t value, std::size_t count, void* stream) override;
    void fill_bytes(void* dst, std::uint8_t value, std::size_t count, void* stream) override;
    void synchronize(void* stream) override;
    std::unique_ptr<DeviceStream> create_stream() override;
    std::unique_ptr<EventTimer> create_timer() override;

private:
    const HipApi& api() const { return *device_.api; }

    HipDeviceHandle device_;
    HipDeviceInfo info_;
    std::string runtime_version_;
};

}  // namespace mqajit
