#pragma once
// The mqa_topk family's epilogue for the sm90 kernel (sm90_epilogue.cuh's OwnedResults, third
// output): a logit is kept only when it lies inside its row's window and is not below the row's
// threshold; then it is appended, with its key column, to the row's candidate buffer. Nothing else
// is stored, so the [S, N] logits never reach memory. `!(value < threshold)` also keeps NaN, which
// the final select orders exactly. A threshold of -inf keeps the whole window: then key col takes
// slot col - window start (the count was set to the window's size beforehand), with no atomic.

#include "sm90_epilogue.cuh"

namespace mqa_sm90 {

template <int kRows>
struct OwnedResults<kRows, Output::candidates> {
    using R = QuadReduction<kRows>;
    int row[R::kHeld];  // -1: nothing to keep (past seq_len, or a lane whose copy another lane keeps)
    int half[R::kHeld];
    int lower[R::kHeld];
    int upper[R::kHeld];
    float threshold[R::kHeld];

    __device__ __forceinline__ void load(const MqaLogitsParams& p, int first_row, int quad_lane) {
#pragma unroll
        for (int k = 0; k < R::kHeld; ++k) {
            const int item = R::item(k, quad_lane);
            const int r = first_row + item / 2;
            half[k] = item % 2;
            const bool valid = R::stores(quad_lane) && r < p.seq_len;
            row[k] = valid ? r : -1;
            const int begin = valid ? p.cu_starts[r] : 0;
            const int end = valid ? p.cu_ends[r] : 0;
            lower[k] = begin < 0 ? 0 : begin;
            upper[k] = end > p.seq_len_kv ? p.seq_len_kv : end;
            threshold[k] = valid ? p.topk_thresholds[r] : 0.f;
        }
    }

    __device__ __forceinline__ void store(const MqaLogitsParams& p, int k, int base_col, float value) const {
        const int col = base_col + 8 * half[k];
        if (row[k] >= 0 && col >= lower[k] && col < upper[k] && !(value < threshold[k])) {
            const int slot = threshold[k] == -__int_as_float(0x7f800000) ? col - lower[k]
                                                                          : atomicAdd(p.topk_counts + row[k], 1);
            if (slot < p.topk_capacity) {
                const long long at = static_cast<long long>(row[k]) * p.topk_capacity + slot;
                p.topk_keys[at] = col;
                p.topk_values[at] = value;
            }
        }
    }
};

}  // namespace mqa_sm90
