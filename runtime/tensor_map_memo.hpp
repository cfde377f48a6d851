#pragma once
// Remembers the last tensor maps this thread encoded. A map is a pure function of its request
// (address, dims, strides, box, element size, swizzle), so a hit is exactly what the driver would
// return; callers that pass the same buffers call after call (an engine's per-layer workspaces)
// then skip cuTensorMapEncodeTiled, about a microsecond of host time each.

#include <array>
#include <cstdint>

#include "codegen/templates/mqa_logits_params.cuh"
#include "runtime/device.hpp"

namespace mqajit {

class TensorMapMemo {
public:
    static constexpr std::size_t kSlots = 16;

    // The map encoded for an equal request, or null.
    const MqaTensorMap* find(const TensorMapRequest& request) const;
    void insert(const TensorMapRequest& request, const MqaTensorMap& map);

private:
    struct Slot {
        bool used = false;
        TensorMapRequest request;
        MqaTensorMap map;
    };
    static std::size_t slot_of(const TensorMapRequest& request);

    std::array<Slot, kSlots> slots_{};
};

bool same_request(const TensorMapRequest& a, const TensorMapRequest& b);

}  // namespace mqajit
