#pragma once
// Where mqa_topk keeps its state in the caller's workspace, and the fused path's sizes. Pure
// arithmetic, shared by mqa_topk_workspace_bytes() and the call.

#include <cstdint>

namespace mqajit {

// The fused path: fixed regions first, then the logits region (the sample's scores, and the rows
// the fallback computes); every offset 256-byte aligned.
struct FusedTopkLayout {
    int capacity = 0;            // candidate slots per row
    int sample_stride = 0;       // every sample_stride-th key is scored first
    std::int64_t sample_len = 0;
    float oversample = 0.f;      // candidates a row's threshold aims at, over k

    std::int64_t thresholds = 0, counts = 0, failed = 0;  // [S] each
    std::int64_t fallback_starts = 0, fallback_ends = 0, sample_starts = 0, sample_ends = 0;
    std::int64_t candidate_keys = 0, candidate_values = 0;  // [S, capacity]
    std::int64_t sample_kv = 0, sample_scales = 0;
    std::int64_t logits = 0;  // the logits region starts here: the fixed part's size
};

// The head_dim the sample's room is sized for (the largest the kernels take).
inline constexpr int kTopkMaxHeadDim = 128;

FusedTopkLayout fused_topk_layout(std::int64_t seq_len, std::int64_t seq_len_kv, int k);

}  // namespace mqajit
