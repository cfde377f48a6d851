#pragma once
// A Device exists only when a driver answered: arch, multiprocessor count, module load and launch.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace mqajit {

struct MqaTensorMap;

// A kernel function loaded into a device context; unloads its module when destroyed.
class LoadedKernel {
public:
    virtual ~LoadedKernel() = default;
    virtual std::string name() const = 0;
};

struct LaunchConfig {
    unsigned grid_x = 1, grid_y = 1, grid_z = 1;
    unsigned block_x = 1, block_y = 1, block_z = 1;
    std::size_t dynamic_shared_bytes = 0;
};

// Describes a 2-D or 3-D tile copy over a global tensor (TMA on NVIDIA), innermost dimension first.
struct TensorMapRequest {
    const void* base = nullptr;
    int rank = 2;                       // 2 or 3
    std::uint64_t dims[3] = {0, 0, 0};  // elements
    std::uint64_t strides_bytes[2] = {0, 0};  // of dims 1.. (dim 0 is dense)
    std::uint32_t box[3] = {0, 0, 0};   // elements per copy
    int element_bytes = 1;
    int swizzle_bytes = 128;            // 0, 32, 64 or 128
};

class Device {
public:
    virtual ~Device() = default;
    virtual std::string arch() const = 0;        // "sm_90a", "gfx950"
    virtual std::string name() const = 0;        // "NVIDIA H200"
    virtual int ordinal() const = 0;
    virtual int multiprocessor_count() const = 0;  // SMs or CUs: the tuning table's cu_num
    virtual std::size_t max_shared_bytes_per_block() const = 0;  // opt-in maximum
    virtual std::string driver_version() const = 0;

    // Loads a binary and finds `kernel_name` in it; throws mqajit::Error(driver) on failure.
    virtual std::shared_ptr<LoadedKernel> load(std::span<const char> binary, const std::string& kernel_name) = 0;
    // Launches `kernel` with one by-value argument of `argument_bytes` bytes on `stream`.
    virtual void launch(const LoadedKernel& kernel, const LaunchConfig& config, void* stream,
                        const void* argument, std::size_t argument_bytes) = 0;
    // Fills `out` with a hardware tensor-copy descriptor; throws Error(unsupported) where there is none.
    virtual void encode_tensor_map(const TensorMapRequest& request, MqaTensorMap& out) const = 0;
    // Makes this device's context current on the calling thread.
    virtual void make_current() = 0;
};

}  // namespace mqajit
