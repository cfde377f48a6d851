#pragma once
// Resource arithmetic of the wgmma family that the registry's rules and the sm90 code generator
// must agree on (codegen/templates/sm90_mqa_logits.cuh, Sm90Config, is the device-side twin).

#include <cstdint>

#include "variants/variant.hpp"

namespace mqajit {

// Dynamic shared memory of one block: 1024 B of alignment slack, the KV stages, two Q buffers,
// the mbarriers and, with four math warpgroups, one weight slice per warpgroup.
std::int64_t wgmma_shared_bytes(const Variant& variant, int heads, int head_dim);

// Whether the variant keeps the q-block's weights in shared memory (four math warpgroups).
inline bool wgmma_weights_in_shared(const Variant& variant) { return variant.warps == 4; }

}  // namespace mqajit
