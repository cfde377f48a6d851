#include "codegen/grid_plan.hpp"

#include <algorithm>

namespace mqajit {
namespace {

constexpr int kUnitsPerMultiprocessor = 2;  // (q-block, KV split) blocks the split rule aims for
constexpr std::int64_t kMaxGridY = 65535;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

int unit_kv_splits(std::int64_t num_q_blocks, std::int64_t num_kv_tiles, int num_multiprocessors) {
    if (num_kv_tiles <= 0 || num_q_blocks <= 0) return 1;
    const std::int64_t wanted = std::clamp<std::int64_t>(
        ceil_div(std::int64_t{kUnitsPerMultiprocessor} * num_multiprocessors, num_q_blocks), 1, num_kv_tiles);
    // NOTES: the kernel hands split y the tiles [y*T, (y+1)*T) with T = ceil(tiles / splits). Picking T
    // first (the most tiles per split that still gives `wanted` splits) and then splits = ceil(tiles / T)
    // leaves no split empty: 10 tiles in 6 splits would give T = 2 and an idle sixth split.
    const std::int64_t tiles_per_split =
        std::max({std::int64_t{1}, num_kv_tiles / wanted, ceil_div(num_kv_tiles, kMaxGridY)});
    return static_cast<int>(ceil_div(num_kv_tiles, tiles_per_split));
}

LaunchPlan unit_grid_plan(std::int64_t num_q_blocks, int num_kv_splits, unsigned threads_per_block,
                          std::size_t dynamic_shared_bytes) {
    LaunchPlan plan;
    plan.num_q_blocks = static_cast<int>(num_q_blocks);
    plan.num_kv_splits = num_kv_splits;
    plan.config.grid_x = static_cast<unsigned>(num_q_blocks);
    plan.config.grid_y = static_cast<unsigned>(num_kv_splits);
    plan.config.block_x = threads_per_block;
    plan.config.dynamic_shared_bytes = dynamic_shared_bytes;
    return plan;
}

}  // namespace mqajit
