#include "codegen/topk_fused.hpp"

#include <algorithm>

#include "codegen/topk_select.hpp"

namespace mqajit {

LaunchConfig topk_sample_launch_config(std::int64_t sample_len, int head_dim, std::int64_t rows) {
    const std::int64_t work = std::max(sample_len * (head_dim / 16), rows);
    LaunchConfig config;
    config.block_x = 256;
    config.grid_x = static_cast<unsigned>(std::clamp<std::int64_t>((work + 255) / 256, 1, 4096));
    return config;
}

LaunchConfig topk_thresholds_launch_config(std::int64_t rows) {
    return topk_block_per_row(rows, MQA_TOPK_THRESHOLDS_THREADS);
}

LaunchConfig topk_candidates_launch_config(std::int64_t rows, int k, int capacity) {
    return topk_block_per_row(rows, MQA_TOPK_THREADS,
                              static_cast<std::size_t>(MQA_TOPK_CANDIDATES_SHARED_BYTES(k, capacity)));
}

}  // namespace mqajit
