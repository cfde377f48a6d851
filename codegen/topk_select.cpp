#include "codegen/topk_select.hpp"

#include <algorithm>

namespace mqajit {

LaunchConfig topk_select_launch_config(std::int64_t rows, int k) {
    LaunchConfig config;
    config.grid_x = static_cast<unsigned>(std::clamp<std::int64_t>(rows, 1, 1 << 20));
    config.block_x = MQA_TOPK_THREADS;
    config.dynamic_shared_bytes =
        static_cast<std::size_t>(MQA_TOPK_CANDIDATES_SHARED_BYTES(k, MQA_TOPK_SELECT_CAPACITY(k)));
    return config;
}

}  // namespace mqajit
