#include "codegen/topk_select.hpp"

#include <algorithm>

namespace mqajit {

LaunchConfig topk_select_launch_config(std::int64_t rows) {
    LaunchConfig config;
    config.grid_x = static_cast<unsigned>(std::clamp<std::int64_t>(rows, 1, 1 << 20));
    config.block_x = MQA_TOPK_THREADS;
    return config;
}

}  // namespace mqajit
