#pragma once
// What a kernel family's plan() hands the runtime for one call, as plain data: the launch shape
// and the tensor-copy descriptors to encode into the kernel argument. Codegen computes it from
// numbers (DeviceLimits, the problem, the argument's pointers and strides); the runtime carries
// it out on a device.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/check.hpp"

namespace mqajit {

struct LaunchConfig {
    unsigned grid_x = 1, grid_y = 1, grid_z = 1;
    unsigned block_x = 1, block_y = 1, block_z = 1;
    std::size_t dynamic_shared_bytes = 0;
    // Programmatic dependent launch (NVIDIA sm_90+; other devices launch as usual): the kernel may
    // start before the previous kernel on the stream has finished, and waits for it inside
    // (templates/grid_dependency.cuh) before it touches global memory.
    bool programmatic_dependent_launch = false;
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

// What planning needs to know of the device a kernel will run on.
struct DeviceLimits {
    int multiprocessors = 0;                     // SMs or CUs
    std::size_t max_shared_bytes_per_block = 0;  // the opt-in maximum
};

// A tensor map the runtime encodes into the kernel argument, `argument_offset` bytes into it.
struct TensorMapPlan {
    TensorMapRequest request;
    std::size_t argument_offset = 0;
};

struct LaunchPlan {
    static constexpr std::size_t kMaxTensorMaps = 3;

    LaunchConfig config;
    int num_kv_splits = 1;  // the argument's launch-time fields, which the runtime writes in
    int num_q_blocks = 1;
    std::array<TensorMapPlan, kMaxTensorMaps> tensor_map_slots{};
    std::size_t num_tensor_maps = 0;

    std::span<const TensorMapPlan> tensor_maps() const { return {tensor_map_slots.data(), num_tensor_maps}; }
    void add_tensor_map(const TensorMapRequest& request, std::size_t argument_offset) {
        MQAJIT_CHECK_KIND(internal, num_tensor_maps < kMaxTensorMaps, "a launch plan holds at most {} tensor maps",
                          kMaxTensorMaps);
        tensor_map_slots[num_tensor_maps++] = {request, argument_offset};
    }
};

}  // namespace mqajit
