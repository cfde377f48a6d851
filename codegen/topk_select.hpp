#pragma once
// The mqa_topk select kernel (codegen/templates/topk_select.cuh): exact top-k per row of a logits
// matrix, pre-built for every arch (codegen/prebuilt/prebuilt_topk_kernels.cu). Its argument is
// TopkSelectParams (topk_select_params.cuh).

#include <cstddef>
#include <cstdint>

#include "codegen/launch_plan.hpp"
#include "topk_select_params.cuh"

namespace mqajit {

inline constexpr const char* kTopkSelectKernelName = "mqa_topk_select";
inline constexpr int kTopkMaxK = MQA_TOPK_MAX_K;

// One block of `threads` per row (up to 2^20 blocks; the topk kernels loop over the rows past the
// grid's width), with `dynamic_shared_bytes`.
LaunchConfig topk_block_per_row(std::int64_t rows, unsigned threads, std::size_t dynamic_shared_bytes = 0);

// One block of MQA_TOPK_THREADS threads per row, with the candidate area of
// MQA_TOPK_SELECT_CAPACITY(k) slots in dynamic shared memory.
LaunchConfig topk_select_launch_config(std::int64_t rows, int k);

}  // namespace mqajit
