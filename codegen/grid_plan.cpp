#include "codegen/grid_plan.hpp"

namespace mqajit {

LaunchPlan unit_grid_plan(MqaLogitsParams& params, std::int64_t num_q_blocks, int num_kv_splits,
                          unsigned threads_per_block, std::size_t dynamic_shared_bytes) {
    params.num_q_blocks = static_cast<int>(num_q_blocks);
    params.num_kv_splits = num_kv_splits;
    LaunchPlan plan;
    plan.num_q_blocks = params.num_q_blocks;
    plan.num_kv_splits = num_kv_splits;
    plan.config.grid_x = static_cast<unsigned>(num_q_blocks);
    plan.config.grid_y = static_cast<unsigned>(num_kv_splits);
    plan.config.block_x = threads_per_block;
    plan.config.dynamic_shared_bytes = dynamic_shared_bytes;
    return plan;
}

}  // namespace mqajit
