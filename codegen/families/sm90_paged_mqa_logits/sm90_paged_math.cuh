#pragma once
// The decode kernel's math warpgroups: one block's wgmmas (keys x Q^T for every token and head of a
// request), the relu / weight / head-sum / key-scale epilogue in registers, the stores into each
// token's row, and the -inf tail of a row with clean_logits.

#include "paged_mqa_logits_params.cuh"
#include "sm90_epilogue.cuh"
#include "sm90_paged_config.cuh"
#include "sm90_paged_schedule.cuh"
#include "sm90_primitives.cuh"
#include "sm90_wgmma.cuh"

namespace mqa_sm90_paged {

// Where one lane's results of a request go (the token's output row) and how far each token sees.
template <class C>
struct TokenResults {
    using R = mqa_sm90::QuadReduction<C::kReduceRows>;
    float* row_start[R::kHeld];  // null for a padding token or a lane that does not store
    int half[R::kHeld];          // 0: key col, 1: col + 8
    int visible[R::kHeld];

    __device__ __forceinline__ void load(const PagedMqaLogitsParams& p, int request, int quad_lane) {
#pragma unroll
        for (int k = 0; k < R::kHeld; ++k) {
            const int item = R::item(k, quad_lane);
            const int token = item / 2;
            half[k] = item % 2;
            const bool valid = R::stores(quad_lane) && token < C::kNextN;
            const long long row = static_cast<long long>(request) * C::kNextN + token;
            row_start[k] = valid ? p.logits + row * p.logits_stride : nullptr;
            visible[k] = valid ? visible_keys(p, request, token) : 0;
        }
    }

    __device__ __forceinline__ void store(const PagedMqaLogitsParams& p, int k, int base_col, float value) const {
        const int col = base_col + 8 * half[k];
        if (row_start[k] != nullptr && col < p.max_context_len) {
            if (p.clean_logits && col >= visible[k]) value = -__int_as_float(0x7f800000);
            row_start[k][col] = value;
        }
    }
};

template <class C>
struct PagedMathGroup {
    using Accumulators = float[C::kMTiles][C::kN / 2];
    using Scales = float[C::kMTiles][2];

    const PagedMqaLogitsParams& p;
    const SharedLayout& smem;
    const int lane = threadIdx.x % 32;
    const int warp_in_group = mqa_sm90::warp_uniform<true>(static_cast<int>(threadIdx.x / 32) % 4);
    const int group_row = lane / 4;
    const int quad_lane = lane % 4;
    float weights[C::kNBlocks][2];
    TokenResults<C> owned;
    u32 q_descriptor = 0;  // low words (descriptor_low): the current request's Q tile
    const u32 key_descriptor = mqa_sm90::descriptor_low<C::kHeadDim>(smem.key_tiles);  // stage 0's

    __device__ __forceinline__ PagedMathGroup(const PagedMqaLogitsParams& params, const SharedLayout& layout)
        : p(params), smem(layout) {}

    __device__ __forceinline__ void load_request(int request) {
#pragma unroll
        for (int block = 0; block < C::kNBlocks; ++block) {
            const int token = block * 8 / C::kHeads;
            const int head = (block * 8) % C::kHeads + 2 * quad_lane;
            const float* w = p.weights + (static_cast<long long>(request) * C::kNextN + token) * p.weights_stride + head;
            weights[block][0] = w[0];
            weights[block][1] = w[1];
        }
        owned.load(p, request, quad_lane);
    }

    __device__ __forceinline__ int slot(int m) const { return m * 64 + warp_in_group * 16 + group_row; }

    // Waits for the block's stage, reads its scales and issues its wgmmas as one commit group.
    __device__ __forceinline__ void issue(Accumulators& acc, Scales& scale, u32 counter) const {
        using namespace mqa_sm90;
        const u32 stage = counter % C::kStages;
        const u32 key_tile = key_descriptor + stage * (C::kKeyStageBytes / 16);
        barrier_wait(smem.kv_full + stage, (counter / C::kStages) & 1);
        const float* stage_scales = smem.scales + stage * C::kBlockKv;
#pragma unroll
        for (int m = 0; m < C::kMTiles; ++m) {
            scale[m][0] = stage_scales[slot(m)];
            scale[m][1] = stage_scales[slot(m) + 8];
        }
        issue_stage_wgmmas<C::kN, C::kHeadDim, C::kMTiles>(acc, key_tile, q_descriptor);
    }

    __device__ __forceinline__ void release(Accumulators& acc, u32 counter) const {
        mqa_sm90::release_stage<C::kN, C::kMTiles>(acc, smem.kv_empty + counter % C::kStages, lane);
    }

    __device__ __forceinline__ void epilogue(const Accumulators& acc, const Scales& scale, int block) const {
        using R = mqa_sm90::QuadReduction<C::kReduceRows>;
#pragma unroll
        for (int m = 0; m < C::kMTiles; ++m) {
            float sums[2 * C::kReduceRows];  // [token * 2 + half]
#pragma unroll
            for (int i = 0; i < 2 * C::kReduceRows; ++i) sums[i] = 0.f;
            // Tokens innermost, as in the prefill kernel: consecutive FFMAs feed different sums (each
            // sum's own order, and so its bits, unchanged).
            constexpr int kBlocksPerToken = C::kHeads / 8;
#pragma unroll
            for (int j = 0; j < kBlocksPerToken; ++j)
#pragma unroll
            for (int t = 0; t < C::kNextN; ++t) {
                const int b = t * kBlocksPerToken + j;
                sums[2 * t] = fmaf(weights[b][0], fmaxf(acc[m][b * 4 + 0], 0.f), sums[2 * t]);
                sums[2 * t] = fmaf(weights[b][1], fmaxf(acc[m][b * 4 + 1], 0.f), sums[2 * t]);
                sums[2 * t + 1] = fmaf(weights[b][0], fmaxf(acc[m][b * 4 + 2], 0.f), sums[2 * t + 1]);
                sums[2 * t + 1] = fmaf(weights[b][1], fmaxf(acc[m][b * 4 + 3], 0.f), sums[2 * t + 1]);
            }
            mqa_sm90::reduce_quad<C::kReduceRows>(sums, quad_lane);
            const int base_col = block * C::kBlockKv + slot(m);
#pragma unroll
            for (int k = 0; k < R::kHeld; ++k)
                owned.store(p, k, base_col, sums[k] * (owned.half[k] ? scale[m][1] : scale[m][0]));
        }
    }
};

// -inf for the columns past a request's computed blocks, shared by every math thread.
template <class C>
__device__ __forceinline__ void fill_tail(const PagedMqaLogitsParams& p, int request, int first_col, int math_thread) {
    const float negative_infinity = -__int_as_float(0x7f800000);
    constexpr int kMathThreads = C::kMathGroups * 128;
    for (int t = 0; t < C::kNextN; ++t) {
        float* out = p.logits + (static_cast<long long>(request) * C::kNextN + t) * p.logits_stride;
        for (int col = first_col + math_thread; col < p.max_context_len; col += kMathThreads)
            out[col] = negative_infinity;
    }
}

}  // namespace mqa_sm90_paged
