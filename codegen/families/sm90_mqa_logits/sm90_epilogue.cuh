#pragma once
// The head-sum epilogue of the sm90 family, after the wgmma accumulators of one 64-row KV slice are
// ready. A lane's accumulators hold two KV columns (its accumulator row and row + 8) for every
// (query row, head) column pair it owns; the four lanes of a quad own the other heads.
//
// Per lane: relu, weight and sum over its heads into one partial sum per (query row, half), where
// half 0 is KV column `col` and half 1 is `col + 8`. The quad then reduces by recursive halving:
// at each of the two exchange steps a lane keeps half of its partial sums and adds its partner's
// copy of that half, so every lane ends up owning whole results (one shuffle per kept value instead
// of a full butterfly per value) and every lane stores without divergence.

#include "mqa_logits_output.cuh"

namespace mqa_sm90 {

template <int kRows>
struct QuadReduction {
    static constexpr int kItems = 2 * kRows;                   // partial sums per lane: item = row * 2 + half
    static constexpr int kHeld = kItems >= 4 ? kItems / 4 : 1;  // whole results per lane afterwards

    // The item that held result `k` of lane `quad_lane` stands for.
    __device__ __forceinline__ static int item(int k, int quad_lane) {
        const int upper_a = (quad_lane >> 1) & 1, upper_b = quad_lane & 1;
        if constexpr (kItems >= 4) return k + upper_b * (kItems / 4) + upper_a * (kItems / 2);
        return upper_a;
    }
    // With one query row and two items, lanes q and q^1 end up with the same value: one stores.
    __device__ __forceinline__ static bool stores(int quad_lane) { return kItems >= 4 || (quad_lane & 1) == 0; }
};

// Lanes L and L ^ mask swap halves: each keeps one half of its n partial sums, adding the partner's.
template <int n>
__device__ __forceinline__ void exchange_halves(float* sums, int mask, bool upper) {
#pragma unroll
    for (int j = 0; j < n / 2; ++j) {
        const float send = upper ? sums[j] : sums[j + n / 2];
        const float keep = upper ? sums[j + n / 2] : sums[j];
        sums[j] = keep + __shfl_xor_sync(0xffffffffu, send, mask);
    }
}

template <int kRows>
__device__ __forceinline__ void reduce_quad(float (&sums)[2 * kRows], int quad_lane) {
    constexpr int kItems = 2 * kRows;
    exchange_halves<kItems>(sums, 2, (quad_lane & 2) != 0);
    if constexpr (kItems / 2 >= 2) {
        exchange_halves<kItems / 2>(sums, 1, (quad_lane & 1) != 0);
    } else {
        sums[0] += __shfl_xor_sync(0xffffffffu, sums[0], 1);
    }
}

// What the kernel does with a logit: dense float32 rows, any mqa_logits_output.cuh placement, or
// (the mqa_topk family) a per-row candidate buffer (OwnedResults' specialization there).
enum class Output { dense, general, candidates };

// Where one lane's results of a q-block go: the output row of each held result and its bounds.
// Output::dense: dense float32 rows, what engines call (the kernel entry picks it when the
// call asks for neither bf16 nor compressed rows); `lower`/`upper` are the row's clamped window,
// for clean_logits' -inf. Output::general: any mqa_logits_output.cuh placement; with compressed
// rows (no clean_logits) `lower`/`upper` are the key columns the row holds.
// NOTES: the general path's per-store branches (dtype, placement) cost 25-35% of the whole kernel
// at S >= 1024 when every call took it (H200, 2026-12-02), hence a dense path without them. A third
// instantiation (branch-free dense bf16) made the float32 r8_w2 rows 10-16% slower (one register
// allocation over all paths): a faster bf16 wants its own kernel, not another path in this one.
// kMathGroups and kMTiles size what an output that keeps per-warp state in shared memory holds
// (Output::candidates: the warps of the block, and the results a tile gives each row).
template <int kRows, Output kOutput, int kMathGroups = 1, int kMTiles = 1>
struct OwnedResults {
    static constexpr bool kGeneralOutput = kOutput == Output::general;
    using R = QuadReduction<kRows>;
    static constexpr unsigned kSharedBytes = 0;  // shared memory it needs beyond the kernel's own
    char* row_base[R::kHeld];  // the row's key column 0 (mqa_output::LogitsRow::base); null past seq_len
    int half[R::kHeld];        // 0: KV column col, 1: col + 8
    int lower[R::kHeld];
    int upper[R::kHeld];

    __device__ __forceinline__ void load(const MqaLogitsParams& p, int first_row, int quad_lane, unsigned char*) {
#pragma unroll
        for (int k = 0; k < R::kHeld; ++k) {
            const int item = R::item(k, quad_lane);
            const int row = first_row + item / 2;
            half[k] = item % 2;
            const bool valid = R::stores(quad_lane) && row < p.seq_len;
            if constexpr (kGeneralOutput) {
                row_base[k] = nullptr;
                lower[k] = upper[k] = 0;
                if (valid) {
                    const mqa_output::LogitsRow out = mqa_output::logits_row(p, row);
                    row_base[k] = out.base;
                    const mqa::Range bounds = p.compressed_columns > 0
                                                  ? out.stored
                                                  : mqa::clamp_window(p.cu_starts[row], p.cu_ends[row], p.seq_len_kv);
                    lower[k] = bounds.begin;
                    upper[k] = bounds.end;
                }
            } else {
                float* const logits = static_cast<float*>(p.logits);
                row_base[k] = valid ? reinterpret_cast<char*>(logits + static_cast<long long>(row) * p.logits_stride_s)
                                    : nullptr;
                const int begin = valid ? p.cu_starts[row] : 0;
                const int end = valid ? p.cu_ends[row] : 0;
                lower[k] = begin < 0 ? 0 : begin;
                upper[k] = end > p.seq_len_kv ? p.seq_len_kv : end;
            }
        }
    }

    // After a tile's results, and after the unit's last tile: nothing is held back here.
    __device__ __forceinline__ void after_tile(const MqaLogitsParams&) const {}
    __device__ __forceinline__ void finish(const MqaLogitsParams&) const {}

    // Stores result k for KV column base_col + 8 * half; value is already scaled.
    __device__ __forceinline__ void store(const MqaLogitsParams& p, int k, int base_col, float value) const {
        const int col = base_col + 8 * half[k];
        if constexpr (kGeneralOutput) {
            if (row_base[k] == nullptr) return;
            if (p.compressed_columns > 0) {
                if (col < lower[k] || col >= upper[k]) return;
            } else {
                if (col >= p.seq_len_kv) return;
                if (p.clean_logits && (col < lower[k] || col >= upper[k])) value = -__int_as_float(0x7f800000);
            }
            mqa_output::store(p, row_base[k], col, value);
        } else {
            if (row_base[k] != nullptr && col < p.seq_len_kv) {
                if (p.clean_logits && (col < lower[k] || col >= upper[k])) value = -__int_as_float(0x7f800000);
                reinterpret_cast<float*>(row_base[k])[col] = value;
            }
        }
    }
};

}  // namespace mqa_sm90
