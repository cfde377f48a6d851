#pragma once
// The launch of the families that give each (q-block, KV split) unit its own block: grid
// (num_q_blocks, num_kv_splits). Fills the launch-time fields of the kernel argument too.

#include <cstddef>
#include <cstdint>

#include "codegen/kernel_family.hpp"
#include "codegen/templates/mqa_logits_params.cuh"

namespace mqajit {

LaunchPlan unit_grid_plan(MqaLogitsParams& params, std::int64_t num_q_blocks, int num_kv_splits,
                          unsigned threads_per_block, std::size_t dynamic_shared_bytes);

}  // namespace mqajit
