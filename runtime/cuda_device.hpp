#pragma once
// An NVIDIA GPU seen through the driver API: its primary context, properties, module load, launch,
// TMA descriptors, memory and timing.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/cuda_context.hpp"
#include "runtime/device.hpp"

namespace mqajit {

// The arch NVRTC should target for a compute capability: "sm_80", "sm_89", and the arch-specific
// "a" form from 9.0 on ("sm_90a", "sm_100a"), since wgmma and tcgen05 exist only there.
std::string arch_for_compute_capability(int major, int minor);

// Throws Error(invalid_argument) naming the field when a TMA descriptor request breaks a hardware
// rule (rank, element size, alignment, box size, swizzle span); the driver would only say "invalid".
void check_tensor_map_request(const TensorMapRequest& request);

class CudaDevice final : public Device {
public:
    // Retains the primary context of device `ordinal` and reads its properties; throws Error(driver).
    CudaDevice(std::shared_ptr<const CudaDriverApi> api, int ordinal);

    std::string arch() const override { return arch_; }
    std::string name() const override { return name_; }
    int ordinal() const override { return context_->ordinal(); }
    int multiprocessor_count() const override { return multiprocessor_count_; }
    std::size_t max_shared_bytes_per_block() const override { return max_shared_bytes_per_block_; }
    std::string driver_version() const override { return driver_version_; }

    std::shared_ptr<LoadedKernel> load(std::span<const char> binary, const std::string& kernel_name) override;
    void launch(const LoadedKernel& kernel, const LaunchConfig& config, void* stream, const void* argument,
                std::size_t argument_bytes) override;
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

    CUcontext context() const { return context_->context(); }
    // Launches made with programmatic dependent launch so far (tests check that options reach here).
    std::uint64_t programmatic_launches() const { return programmatic_launches_.load(std::memory_order_relaxed); }

private:
    const CudaDriverApi& api() const { return context_->api(); }

    std::shared_ptr<const CudaPrimaryContext> context_;
    std::string arch_;
    int compute_major_ = 0;
    std::string name_;
    int multiprocessor_count_ = 0;
    std::size_t max_shared_bytes_per_block_ = 0;
    std::string driver_version_;
    std::atomic<std::uint64_t> programmatic_launches_{0};
};

}  // namespace mqajit
