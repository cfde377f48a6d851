#pragma once
// Host-side split rules of the wgmma family (codegen/sm90_family.cpp), for tools and tests.

#include <cstdint>

namespace mqajit {

// The split count nearest `wanted` (clamped to [1, tiles]) that leaves no split without tiles.
std::int64_t whole_kv_splits(std::int64_t num_kv_tiles, std::int64_t wanted);

// KV splits per q-block for the persistent grid of `num_multiprocessors` blocks: the count that
// minimizes the modelled time (rounds of units x (tiles per unit + a unit's start-up)) under full
// windows; ties go to fewer splits.
int sm90_kv_splits(std::int64_t num_q_blocks, std::int64_t num_kv_tiles, int num_multiprocessors);

}  // namespace mqajit
