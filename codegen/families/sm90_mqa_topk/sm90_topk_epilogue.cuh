#pragma once
// The mqa_topk family's epilogue for the sm90 kernel (sm90_epilogue.cuh's OwnedResults, third
// output): a logit is kept only when it lies inside its row's window and is not below the row's
// threshold; then it is appended, with its key column, to the row's candidate buffer. Nothing else
// is stored, so the [S, N] logits never reach memory. `!(value < threshold)` also keeps NaN, which
// the final select orders exactly. A threshold of -inf keeps the whole window: then key col takes
// slot col - window start (the count was set to the window's size beforehand), with no atomic.
//
// Appends are counted per warp: the lanes holding one row's results at a store (the same for every
// store of a unit, so the grouping is found once per unit) take consecutive slots, and one of them
// reserves them with a single atomicAdd. NOTES: one atomicAdd per kept logit on the row's counter
// made the twgmma kernel 2.1-4.3x its twin's time (H200, 2026-12-05: the atomics on a few hundred
// addresses serialize in L2); the slots of a group are also adjacent, so its stores coalesce.

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
    unsigned same_row[R::kHeld];  // the lanes whose result k belongs to this lane's row

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
            same_row[k] = __match_any_sync(0xffffffffu, row[k]);
        }
    }

    // Every lane of the warp calls it (the slots are handed out by warp votes).
    __device__ __forceinline__ void store(const MqaLogitsParams& p, int k, int base_col, float value) const {
        const int col = base_col + 8 * half[k];
        const bool keep = row[k] >= 0 && col >= lower[k] && col < upper[k] && !(value < threshold[k]);
        const bool whole_window = threshold[k] == -__int_as_float(0x7f800000);
        const bool append = keep && !whole_window;
        const unsigned appending = __ballot_sync(0xffffffffu, append);
        int slot = keep ? col - lower[k] : 0;
        if (appending != 0u) {
            const unsigned lane = threadIdx.x % 32;
            const unsigned group = appending & same_row[k];
            const int leader = group != 0u ? __ffs(group) - 1 : static_cast<int>(lane);
            int first_slot = 0;
            if (append && static_cast<int>(lane) == leader)
                first_slot = atomicAdd(p.topk_counts + row[k], __popc(group));
            first_slot = __shfl_sync(0xffffffffu, first_slot, leader);
            if (append) slot = first_slot + __popc(group & ((1u << lane) - 1u));
        }
        if (keep && slot < p.topk_capacity) {
            const long long at = static_cast<long long>(row[k]) * p.topk_capacity + slot;
            p.topk_keys[at] = col;
            p.topk_values[at] = value;
        }
    }
};

}  // namespace mqa_sm90
