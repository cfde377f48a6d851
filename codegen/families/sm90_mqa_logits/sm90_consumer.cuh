#pragma once
// The math warpgroups of the sm90 family (see sm90_mqa_logits.cuh): each takes whole KV tiles in
// turn, runs the wgmma of a tile on KV x Q^T and the head-sum epilogue on its accumulators.
// Pipelined configurations (C::kPipelined: two accumulator sets fit in the registers) issue the
// wgmma of their next tile before the epilogue of the current one, so a warpgroup's CUDA-core work
// overlaps its own matrix work as well as the other warpgroups'.

#include "sm90_epilogue.cuh"

namespace mqa_sm90 {

// Writes -inf to the unit's columns outside its computed tiles; math threads share the work.
template <class C, Output kOutput>
__device__ __forceinline__ void fill_uncomputed(const MqaLogitsParams& p, const Unit& unit, int math_thread) {
    const int computed_begin = min(unit.col_end, unit.tile_begin * C::kBlockKv);
    const int computed_end = unit.tile_end == unit.tile_begin ? computed_begin
                                                              : min(unit.col_end, unit.tile_end * C::kBlockKv);
    constexpr int kMathThreads = C::kMathGroups * 128;
    const mqa::Range before{unit.col_begin, computed_begin}, after{computed_end, unit.col_end};
    for (int r = 0; r < C::kRows; ++r) {
        const int row = unit.first_row + r;
        if (row >= p.seq_len) break;
        if constexpr (kOutput == Output::general) {
            const mqa_output::LogitsRow out = mqa_output::logits_row(p, row);
            mqa_output::fill_negative_infinity(p, out, before, math_thread, kMathThreads);
            mqa_output::fill_negative_infinity(p, out, after, math_thread, kMathThreads);
        } else {
            const float negative_infinity = -__int_as_float(0x7f800000);
            float* out = static_cast<float*>(p.logits) + static_cast<long long>(row) * p.logits_stride_s;
            for (int col = before.begin + math_thread; col < before.end; col += kMathThreads) out[col] = negative_infinity;
            for (int col = after.begin + math_thread; col < after.end; col += kMathThreads) out[col] = negative_infinity;
        }
    }
}

__device__ __forceinline__ void warpgroup_barrier(int math_group) {
    asm volatile("bar.sync %0, 128;" ::"r"(1 + math_group) : "memory");
}

// The weights of this thread's heads for the current q-block, by 8-column block: in registers,
// or (C::kWeightsInShared) in the warpgroup's slice of shared memory.
template <class C, bool kShared = C::kWeightsInShared>
struct ThreadWeights {
    float value[C::kNBlocks][2];

    __device__ __forceinline__ void load(const MqaLogitsParams& p, const Unit& unit, int quad_lane, float*, int) {
#pragma unroll
        for (int block = 0; block < C::kNBlocks; ++block) {
            const int r = block * 8 / C::kHeads;
            const int head = (block * 8) % C::kHeads + 2 * quad_lane;
            const int row = unit.first_row + r;
            const bool valid = row < p.seq_len;
            const float* w = p.weights + static_cast<long long>(row) * p.weights_stride_s + head;
            value[block][0] = valid ? w[0] : 0.f;
            value[block][1] = valid ? w[1] : 0.f;
        }
    }
    __device__ __forceinline__ float2 get(int block) const { return make_float2(value[block][0], value[block][1]); }
};

template <class C>
struct ThreadWeights<C, true> {
    const float* pair;  // this lane's first head of block 0 in the warpgroup's [kN] slice

    __device__ __forceinline__ void load(const MqaLogitsParams& p, const Unit& unit, int quad_lane, float* slices,
                                         int math_group) {
        float* slice = slices + math_group * C::kN;
        const int index = threadIdx.x % 128;  // one (row, head) per thread: kN == 128
        const int row = unit.first_row + index / C::kHeads;
        warpgroup_barrier(math_group);  // the previous q-block's readers are done with the slice
        slice[index] = row < p.seq_len ? p.weights[static_cast<long long>(row) * p.weights_stride_s + index % C::kHeads]
                                       : 0.f;
        warpgroup_barrier(math_group);
        pair = slice + 2 * quad_lane;
    }
    // Columns block*8 + 2*quad_lane (+1) are (row, head) pairs laid out as row*kHeads + head.
    __device__ __forceinline__ float2 get(int block) const {
        return *reinterpret_cast<const float2*>(pair + block * 8);
    }
};

// One math warpgroup's view of the unit it is working on.
template <class C, Output kOutput>
struct MathGroup {
    using Accumulators = float[C::kMTiles][C::kN / 2];
    using Scales = float[C::kMTiles][2];

    const MqaLogitsParams& p;
    const SharedLayout& smem;
    const int lane = threadIdx.x % 32;
    const int warp_in_group = warp_uniform<C::kUniformWarpIndex>(static_cast<int>(threadIdx.x / 32) % 4);
    const int group_row = lane / 4;  // accumulator row inside the warp's 16
    const int quad_lane = lane % 4;  // which column pair of each 8-column block
    ThreadWeights<C> weights;
    OwnedResults<C::kRows, kOutput, C::kMathGroups, C::kMTiles> owned;
    u32 q_descriptor = 0;  // low words (descriptor_low): the current q-block's tile
    const u32 kv_descriptor = descriptor_low<C::kHeadDim>(smem.kv_tiles);  // stage 0's

    __device__ __forceinline__ MathGroup(const MqaLogitsParams& params, const SharedLayout& layout)
        : p(params), smem(layout) {}

    __device__ __forceinline__ int first_col(int tile, int m) const {
        return tile * C::kBlockKv + m * 64 + warp_in_group * 16 + group_row;
    }

    __device__ __forceinline__ void load_scales(int tile, Scales& scale) const {
#pragma unroll
        for (int m = 0; m < C::kMTiles; ++m) {
            const int col = first_col(tile, m);
            scale[m][0] = col < p.seq_len_kv ? p.kv_scales[col] : 0.f;
            scale[m][1] = col + 8 < p.seq_len_kv ? p.kv_scales[col + 8] : 0.f;
        }
    }

    // Waits for the tile's stage and issues its wgmmas as one commit group.
    __device__ __forceinline__ void issue(Accumulators& acc, u32 counter) const {
        const u32 stage = counter % C::kStages;
        const u32 kv_tile = kv_descriptor + stage * (C::kKvStageBytes / 16);
        barrier_wait(smem.kv_full + stage, (counter / C::kStages) & 1);
        issue_stage_wgmmas<C::kN, C::kHeadDim, C::kMTiles>(acc, kv_tile, q_descriptor);
    }

    // After the tile's wgmmas are waited for: pin the accumulators and hand the stage back.
    __device__ __forceinline__ void release(Accumulators& acc, u32 counter) const {
        release_stage<C::kN, C::kMTiles>(acc, smem.kv_empty + counter % C::kStages, lane);
    }

    __device__ __forceinline__ void epilogue(const Accumulators& acc, const Scales& scale, int tile) const {
#pragma unroll
        for (int m = 0; m < C::kMTiles; ++m) {
            float sums[2 * C::kRows];  // [row * 2 + half]
#pragma unroll
            for (int i = 0; i < 2 * C::kRows; ++i) sums[i] = 0.f;
            // Rows innermost: consecutive FFMAs feed different sums (the order within each sum is
            // unchanged), so the dependent chains interleave whatever ptxas does with them.
            constexpr int kBlocksPerRow = C::kHeads / 8;
#pragma unroll
            for (int j = 0; j < kBlocksPerRow; ++j)
#pragma unroll
            for (int r = 0; r < C::kRows; ++r) {
                const int block = r * kBlocksPerRow + j;
                const float2 w = weights.get(block);
                sums[2 * r] = fmaf(w.x, fmaxf(acc[m][block * 4 + 0], 0.f), sums[2 * r]);
                sums[2 * r] = fmaf(w.y, fmaxf(acc[m][block * 4 + 1], 0.f), sums[2 * r]);
                sums[2 * r + 1] = fmaf(w.x, fmaxf(acc[m][block * 4 + 2], 0.f), sums[2 * r + 1]);
                sums[2 * r + 1] = fmaf(w.y, fmaxf(acc[m][block * 4 + 3], 0.f), sums[2 * r + 1]);
            }
            reduce_quad<C::kRows>(sums, quad_lane);
            const int base_col = first_col(tile, m);
#pragma unroll
            for (int k = 0; k < QuadReduction<C::kRows>::kHeld; ++k)
                owned.store(p, k, base_col, sums[k] * (owned.half[k] ? scale[m][1] : scale[m][0]));
        }
        owned.after_tile(p);
    }

    // Tiles first, first + W, ... of the unit; tile_counter counts tiles across units.
    __device__ __forceinline__ void run_tiles(const Unit& unit, u32 tile_counter, int first, Accumulators& acc) {
        const int unit_tiles = unit.tile_end - unit.tile_begin;
        for (int t = first; t < unit_tiles; t += C::kMathGroups) {
            Scales scale;
            load_scales(unit.tile_begin + t, scale);
            issue(acc, tile_counter + t);
            wgmma_wait<0>();
            release(acc, tile_counter + t);
            epilogue(acc, scale, unit.tile_begin + t);
        }
    }

    // NOTES: the two halves of the loop differ only in which accumulator set is current; they stay
    // written out because a shared one-step helper made ptxas serialize the wgmma (C7518) of the
    // N=64 and bkv64 pipelined variants (tried 2026-11-30; test_sm90_codegen catches it).
    __device__ __forceinline__ void run_tiles_pipelined(const Unit& unit, u32 tile_counter, int first, Accumulators& acc_a,
                                                        Accumulators& acc_b) {
        const int unit_tiles = unit.tile_end - unit.tile_begin;
        Scales scale_a, scale_b;
        if (first >= unit_tiles) return;
        load_scales(unit.tile_begin + first, scale_a);
        issue(acc_a, tile_counter + first);
        int t = first;
        while (true) {
            if (t + C::kMathGroups >= unit_tiles) {
                wgmma_wait<0>();
                release(acc_a, tile_counter + t);
                epilogue(acc_a, scale_a, unit.tile_begin + t);
                break;
            }
            load_scales(unit.tile_begin + t + C::kMathGroups, scale_b);
            issue(acc_b, tile_counter + t + C::kMathGroups);
            wgmma_wait<1>();
            release(acc_a, tile_counter + t);
            epilogue(acc_a, scale_a, unit.tile_begin + t);
            t += C::kMathGroups;
            if (t + C::kMathGroups >= unit_tiles) {
                wgmma_wait<0>();
                release(acc_b, tile_counter + t);
                epilogue(acc_b, scale_b, unit.tile_begin + t);
                break;
            }
            load_scales(unit.tile_begin + t + C::kMathGroups, scale_a);
            issue(acc_a, tile_counter + t + C::kMathGroups);
            wgmma_wait<1>();
            release(acc_b, tile_counter + t);
            epilogue(acc_b, scale_b, unit.tile_begin + t);
            t += C::kMathGroups;
        }
    }
};

// Output::general: bf16 logits or compressed rows (OwnedResults says why it is a separate path).
template <class C, Output kOutput>
__device__ __forceinline__ void consume(const MqaLogitsParams& p, const SharedLayout& smem, int math_group) {
    MathGroup<C, kOutput> group(p, smem);
    const int math_thread = math_group * 128 + threadIdx.x % 128;
    float acc_a[C::kMTiles][C::kN / 2];
    float acc_b[C::kPipelined ? C::kMTiles : 1][C::kPipelined ? C::kN / 2 : 1];

    u32 tile_counter = 0, q_counter = 0;
    for (int round = 0, position; (position = unit_position(round)) < num_units<C>(p); ++round) {
        const Unit unit = describe_unit<C::kRows, C::kBlockKv>(p, position);
        if constexpr (kOutput != Output::candidates) {
            if (p.clean_logits) fill_uncomputed<C, kOutput>(p, unit, math_thread);
        }
        if (unit.tile_end == unit.tile_begin) continue;

        group.weights.load(p, unit, group.quad_lane, smem.weights, math_group);
        group.owned.load(p, unit.first_row, group.quad_lane, smem.output);
        const u32 q_buffer = q_counter % C::kQBuffers;
        barrier_wait(smem.q_full + q_buffer, (q_counter / C::kQBuffers) & 1);
        group.q_descriptor = descriptor_low<C::kHeadDim>(smem.q_tiles + q_buffer * C::kQBufferBytes);

        // Tiles go to the math warpgroups in turn, counted across units: this group's first one here.
        const int first = static_cast<int>((static_cast<u32>(math_group) + C::kMathGroups -
                                            tile_counter % C::kMathGroups) % C::kMathGroups);
        if constexpr (C::kPipelined) {
            group.run_tiles_pipelined(unit, tile_counter, first, acc_a, acc_b);
        } else {
            group.run_tiles(unit, tile_counter, first, acc_a);
        }
        group.owned.finish(p);
        tile_counter += unit.tile_end - unit.tile_begin;
        __syncwarp();
        if (group.lane == 0) barrier_arrive(smem.q_empty + q_buffer);
        ++q_counter;
    }
}

}  // namespace mqa_sm90
