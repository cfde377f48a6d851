#include "runtime/tensor_map_memo.hpp"

#include <algorithm>

namespace mqajit {

bool same_request(const TensorMapRequest& a, const TensorMapRequest& b) {
    return a.base == b.base && a.rank == b.rank && std::equal(a.dims, a.dims + 3, b.dims) &&
           std::equal(a.strides_bytes, a.strides_bytes + 2, b.strides_bytes) && std::equal(a.box, a.box + 3, b.box) &&
           a.element_bytes == b.element_bytes && a.swizzle_bytes == b.swizzle_bytes;
}

std::size_t TensorMapMemo::slot_of(const TensorMapRequest& request) {
    // NOTES: the address decides the slot (buffers are at least 256-byte aligned, so its low bits
    // carry nothing); the dims mix in so q and kv maps of one buffer pool spread out.
    std::uint64_t h = reinterpret_cast<std::uintptr_t>(request.base) >> 8;
    h ^= request.dims[1] * 0x9E3779B97F4A7C15ull + request.dims[2];
    h ^= h >> 29;
    return static_cast<std::size_t>(h % kSlots);
}

const MqaTensorMap* TensorMapMemo::find(const TensorMapRequest& request) const {
    const Slot& slot = slots_[slot_of(request)];
    return slot.used && same_request(slot.request, request) ? &slot.map : nullptr;
}

void TensorMapMemo::insert(const TensorMapRequest& request, const MqaTensorMap& map) {
    Slot& slot = slots_[slot_of(request)];
    slot.used = true;
    slot.request = request;
    slot.map = map;
}

}  // namespace mqajit
