#include "runtime/mqa_topk_layout.hpp"

#include <algorithm>

namespace mqajit {
namespace {

std::int64_t round_up(std::int64_t value, std::int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// NOTES: the sample is sized so that about 64 of its keys fall in a row's top k whatever N is
// (stride k / 64, made odd so that it does not fall in step with power-of-two structure in the
// keys: 33 at k = 2048, 3% of the kernel's work), and the threshold sits at the sample
// rank that 1.6 k keys of the window are expected to reach. With 64 sample keys expected above
// the true k-th logit, their count's spread (about 8) puts the threshold below the k-th logit
// (too few candidates) at about 5 spreads; 2.5 k slots hold 1.6 k +- 10% with as much room.
// Rows where it fails anyway (data unlike a random sample) go to the unfused path, exactly.
constexpr int kSampleKeysInTopK = 64;
constexpr float kOversample = 1.6f;

}  // namespace

FusedTopkLayout fused_topk_layout(std::int64_t seq_len, std::int64_t seq_len_kv, int k) {
    FusedTopkLayout layout;
    layout.capacity = static_cast<int>(round_up(std::max(k * 5 / 2, 1024), 128));
    layout.sample_stride = std::max(1, k / kSampleKeysInTopK) | 1;
    layout.sample_len = (seq_len_kv + layout.sample_stride - 1) / layout.sample_stride;
    layout.oversample = kOversample;

    std::int64_t offset = 0;
    const auto take = [&](std::int64_t bytes) {
        const std::int64_t at = offset;
        offset = round_up(offset + bytes, 256);
        return at;
    };
    const std::int64_t row_state = 4 * seq_len;
    layout.thresholds = take(row_state);
    layout.counts = take(row_state);
    layout.failed = take(row_state);
    layout.fallback_starts = take(row_state);
    layout.fallback_ends = take(row_state);
    layout.sample_starts = take(row_state);
    layout.sample_ends = take(row_state);
    layout.candidate_keys = take(4 * seq_len * layout.capacity);
    layout.candidate_values = take(4 * seq_len * layout.capacity);
    layout.sample_kv = take(layout.sample_len * kTopkMaxHeadDim);
    layout.sample_scales = take(4 * layout.sample_len);
    layout.logits = offset;
    return layout;
}

}  // namespace mqajit
