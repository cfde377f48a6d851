#include "codegen/topk_select.hpp"

#include <algorithm>

namespace mqajit {

LaunchConfig topk_block_per_row(std::int64_t rows, unsigned threads, std::size_t dynamic_shared_bytes) {
    LaunchConfig config;
    config.grid_x = static_cast<unsigned>(std::clamp<std::int64_t>(rows, 1, 1 << 20));
    config.block_x = threads;
    config.dynamic_shared_bytes = dynamic_shared_bytes;
    return config;
}

LaunchConfig topk_select_launch_config(std::int64_t rows, int k) {
    return topk_block_per_row(
        rows, MQA_TOPK_THREADS, static_cast<std::size_t>(MQA_TOPK_CANDIDATES_SHARED_BYTES(k, MQA_TOPK_SELECT_CAPACITY(k))));
}

}  // namespace mqajit
