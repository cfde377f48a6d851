#pragma once
// The launch of the families that give each (q-block, KV split) unit its own block (mma, mfma):
// grid (num_q_blocks, num_kv_splits), and the split rule they share.

#include <cstddef>
#include <cstdint>

#include "codegen/launch_plan.hpp"

namespace mqajit {

// KV splits per q-block: enough that q-blocks x splits reaches twice the multiprocessor count where
// the KV tiles allow, never more splits than tiles (nor 65535), and none of them left without tiles.
int unit_kv_splits(std::int64_t num_q_blocks, std::int64_t num_kv_tiles, int num_multiprocessors);

// Grid (num_q_blocks, num_kv_splits) of `threads_per_block` threads and `dynamic_shared_bytes`.
LaunchPlan unit_grid_plan(std::int64_t num_q_blocks, int num_kv_splits, unsigned threads_per_block,
                          std::size_t dynamic_shared_bytes);

}  // namespace mqajit
