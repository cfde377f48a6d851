#pragma once
// The fused path's helper kernels (codegen/templates/topk_fused.cuh), pre-built in the mqa_topk
// fatbin beside the select kernel; their argument is TopkFusedParams (topk_fused_params.cuh).

#include <cstdint>

#include "codegen/launch_plan.hpp"
#include "topk_fused_params.cuh"

namespace mqajit {

inline constexpr const char* kTopkSampleKernelName = "mqa_topk_sample";
inline constexpr const char* kTopkThresholdsKernelName = "mqa_topk_thresholds";
inline constexpr const char* kTopkCandidatesKernelName = "mqa_topk_candidates";

// Grid-stride copies of the sample keys, scales and windows.
LaunchConfig topk_sample_launch_config(std::int64_t sample_len, int head_dim, std::int64_t rows);
// One block of MQA_TOPK_THRESHOLDS_THREADS per row.
LaunchConfig topk_thresholds_launch_config(std::int64_t rows);
// One block of MQA_TOPK_THREADS per row, with the candidates and the ranking bitmap in dynamic
// shared memory (MQA_TOPK_CANDIDATES_SHARED_BYTES: the bitmap or the sort's selection, and capacity
// candidates).
LaunchConfig topk_candidates_launch_config(std::int64_t rows, int k, int capacity);

}  // namespace mqajit
