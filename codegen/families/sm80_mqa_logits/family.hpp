#pragma once
// Host-side sizing and split rules of the mma family (codegen/sm80_family.cpp), for the registry,
// tools and tests.

#include <cstddef>
#include <cstdint>

#include "variants/variant.hpp"

namespace mqajit {

// Dynamic shared memory of one CTA of an mma `variant` at (heads, head_dim), in bytes: Q tile, KV
// stages, the result staging tile, weights and windows (codegen/templates/sm80_mqa_logits.cuh).
std::size_t sm80_shared_bytes(const Variant& variant, int heads, int head_dim);

// KV splits per q-block: enough that q-blocks x splits reaches twice the multiprocessor count where
// the KV tiles allow, never more splits than tiles (nor 65535), and none of them left without tiles.
int sm80_kv_splits(std::int64_t num_q_blocks, std::int64_t num_kv_tiles, int num_multiprocessors);

}  // namespace mqajit
