#pragma once
// Resource arithmetic of the sm90_mqa_logits family: the one function its rules and its launch
// plan both use (sm90_mqa_logits.cuh's Sm90Config is the device-side twin).

#include <cstdint>

#include "variants/variant.hpp"

namespace mqajit {

// Shared memory one block may use on sm_90a (227 KiB); every sm90 family's rules check against it.
inline constexpr std::int64_t kSm90MaxSharedBytes = 227 * 1024;

// Dynamic shared memory of one block: 1024 B of alignment slack, the KV stages, two Q buffers,
// the mbarriers and, with four math warpgroups, one weight slice per warpgroup.
std::int64_t wgmma_shared_bytes(const Variant& variant, int heads, int head_dim);

// Whether the variant keeps the q-block's weights in shared memory (four math warpgroups).
inline bool wgmma_weights_in_shared(const Variant& variant) { return variant.warps == 4; }

}  // namespace mqajit
