#pragma once
// The sm_90a MQA-logits kernel family: TMA loads into a shared-memory ring, wgmma (e4m3) on
// KV x Q^T, and the relu / weight / head-sum / scale epilogue in registers, with the -inf fill
// fused in. Variant `wgmma64x<N>x32_bkv<B>_r<R>_w<W>_lds<S>` instantiates Sm90Config<H, D, B, R, W, S>.
//
// Block: warpgroup 0 is the producer (one thread issues every TMA load); warpgroups 1..W do math.
// Work: a persistent grid walks units (q-block, KV split) in a snake order (see unit_position).
// Inside a unit, the KV tiles that meet the q-block's windows are computed; math warpgroups take
// whole tiles in turn, so one warpgroup's epilogue overlaps another's wgmma (and, when pipelined,
// its own next wgmma).

#include "grid_dependency.cuh"
#include "mqa_logits_params.cuh"
#include "sm90_primitives.cuh"
#include "sm90_wgmma.cuh"

namespace mqa_sm90 {

template <int kHeads_, int kHeadDim_, int kBlockKv_, int kRows_, int kMathGroups_, int kStages_>
struct Sm90Config {
    static constexpr int kHeads = kHeads_;
    static constexpr int kHeadDim = kHeadDim_;
    static constexpr int kBlockKv = kBlockKv_;       // KV rows per stage
    static constexpr int kRows = kRows_;             // query rows per q-block
    static constexpr int kMathGroups = kMathGroups_;
    static constexpr int kStages = kStages_;

    static constexpr int kN = kRows * kHeads;        // the wgmma N side: (query row, head)
    static constexpr int kMTiles = kBlockKv / 64;    // m64 wgmmas per stage
    static constexpr int kNBlocks = kN / 8;
    static constexpr int kThreads = (kMathGroups + 1) * 128;
    // Two accumulator sets (the next tile's wgmma in flight during an epilogue) when they fit.
    static constexpr bool kPipelined = kMathGroups <= 2 && 2 * kMTiles * kN / 2 <= 128;

    static constexpr u32 kKvStageBytes = kBlockKv * kHeadDim;
    static constexpr u32 kQBufferBytes = kN * kHeadDim;
    static constexpr int kQBuffers = 2;
    static constexpr u32 kBarrierBytes = 8 * (2 * kStages + 2 * kQBuffers);
    // NOTES: with four math warpgroups a thread has 112 registers: 64 accumulators leave no room
    // for the 32 weights, so each warpgroup keeps its q-block's weights in shared memory instead.
    static constexpr bool kWeightsInShared = kMathGroups == 4;
    static constexpr u32 kWeightBytes = kWeightsInShared ? kMathGroups * kN * 4 : 0;
    // NOTES: +1024 so the ring can start on a 1024-byte boundary, which the 128B swizzle needs.
    static constexpr u32 kSharedBytes =
        1024 + kStages * kKvStageBytes + kQBuffers * kQBufferBytes + kBarrierBytes + kWeightBytes;

    // Register split between the producer warpgroup and the math warpgroups (setmaxnreg). The pool
    // is threads x the entry allocation (launch bounds): 168, 128 and 96 for 2, 3 and 4 math groups.
    static constexpr int kProducerRegisters = kMathGroups == 4 ? 24 : 40;
    static constexpr int kMathRegisters = kMathGroups == 2 ? 232 : (kMathGroups == 3 ? 152 : 112);
    // NOTES: a warp-uniform warpgroup index (warp_uniform) puts the stage and descriptor math in
    // uniform registers, but ptxas then sinks the lane-0 arrival on kv_empty below the epilogue.
    // H200, 2026-12-03: 4% faster at H=32 (r8 bkv64; 2% at r4 bkv128), 14-22% slower at H=64 (r4
    // bkv64); every thread arriving instead kept the arrival early but was 14-17% slower at H=32.
    static constexpr bool kUniformWarpIndex = kHeads <= 32;

    static_assert(kHeadDim == 64 || kHeadDim == 128, "head_dim 64 or 128");
    static_assert(kBlockKv == 64 || kBlockKv == 128, "bkv 64 or 128");
    static_assert(kN == 64 || kN == 128 || kN == 256, "N = rows x heads must be 64, 128 or 256");
    static_assert(kHeads % 8 == 0, "heads must be a multiple of 8");
    static_assert(kMathGroups >= 1 && kMathGroups <= 4, "1 to 4 math warpgroups");
    static_assert(kStages % kMathGroups == 0, "each stage must always serve the same math warpgroup");
    static_assert(!kWeightsInShared || kN == 128, "shared-memory weights assume one weight per math thread");
    static_assert(kMTiles * kN / 2 <= 128, "accumulators per thread must stay within 128 registers");
};

// The columns one unit owns and the KV tiles it computes.
struct Unit {
    int q_block;
    int first_row;    // q_block * rows
    int col_begin;    // the split's columns [col_begin, col_end)
    int col_end;
    int tile_begin;   // computed tiles [tile_begin, tile_end), inside the split
    int tile_end;
};

__device__ __forceinline__ int clamp_index(int value, int low, int high) {
    return value < low ? low : (value > high ? high : value);
}

// NOTES: the block's unit in `round`. Rounds of gridDim.x positions go forward and backward in
// turn (a snake), and positions run split by split, each split from its last q-block to its first.
// Under causal masks the later q-blocks have the longer windows, so units are dealt out longest
// first and a block that drew a long unit in one round draws a short one in the next: close to
// the longest-processing-time rule, with no device-wide counter. Round robin in (q-block, split)
// order gave every even block the full first splits and every odd one the short last ones.
__device__ __forceinline__ int unit_position(int round) {
    const int slot = (round & 1) ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : static_cast<int>(blockIdx.x);
    return round * static_cast<int>(gridDim.x) + slot;
}

template <int kRows, int kBlockKv>
__device__ __forceinline__ Unit describe_unit(const MqaLogitsParams& p, int position) {
    Unit unit;
    const int split = position / p.num_q_blocks;
    unit.q_block = p.num_q_blocks - 1 - position % p.num_q_blocks;
    unit.first_row = unit.q_block * kRows;
    const int num_tiles = (p.seq_len_kv + kBlockKv - 1) / kBlockKv;
    const int tiles_per_split = (num_tiles + p.num_kv_splits - 1) / p.num_kv_splits;
    const int split_begin = min(num_tiles, split * tiles_per_split);
    const int split_end = min(num_tiles, split_begin + tiles_per_split);
    unit.col_begin = min(p.seq_len_kv, split_begin * kBlockKv);
    unit.col_end = min(p.seq_len_kv, split_end * kBlockKv);

    int window_begin = p.seq_len_kv, window_end = 0;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
        const int row = unit.first_row + r;
        if (row < p.seq_len) {
            const int start = clamp_index(p.cu_starts[row], 0, p.seq_len_kv);
            const int end = clamp_index(p.cu_ends[row], 0, p.seq_len_kv);
            if (start < end) {
                window_begin = min(window_begin, start);
                window_end = max(window_end, end);
            }
        }
    }
    unit.tile_begin = split_begin;
    unit.tile_end = split_begin;
    if (window_begin < window_end) {
        unit.tile_begin = max(split_begin, window_begin / kBlockKv);
        unit.tile_end = min(split_end, (window_end + kBlockKv - 1) / kBlockKv);
        if (unit.tile_end < unit.tile_begin) unit.tile_end = unit.tile_begin;
    }
    return unit;
}

struct SharedLayout {
    unsigned char* kv_tiles;
    unsigned char* q_tiles;
    u64* kv_full;
    u64* kv_empty;
    u64* q_full;
    u64* q_empty;
    float* weights;  // [math group][kN], when C::kWeightsInShared
    unsigned char* output;  // past kSharedBytes: what the output keeps there (OwnedResults::kSharedBytes)
};

template <class C>
__device__ __forceinline__ SharedLayout carve_shared(unsigned char* raw) {
    const u32 misalignment = shared_address(raw) & 1023u;
    unsigned char* base = raw + (misalignment == 0 ? 0 : 1024 - misalignment);
    SharedLayout layout;
    layout.kv_tiles = base;
    layout.q_tiles = base + C::kStages * C::kKvStageBytes;
    u64* barriers = reinterpret_cast<u64*>(layout.q_tiles + C::kQBuffers * C::kQBufferBytes);
    layout.kv_full = barriers;
    layout.kv_empty = barriers + C::kStages;
    layout.q_full = barriers + 2 * C::kStages;
    layout.q_empty = barriers + 2 * C::kStages + C::kQBuffers;
    layout.weights = reinterpret_cast<float*>(barriers + 2 * C::kStages + 2 * C::kQBuffers);
    layout.output = raw + C::kSharedBytes;
    return layout;
}

template <class C>
__device__ __forceinline__ int num_units(const MqaLogitsParams& p) {
    return p.num_q_blocks * p.num_kv_splits;
}

// One thread issues every TMA load, in the same (unit, tile) order the math warpgroups consume.
template <class C>
__device__ __forceinline__ void produce(const MqaLogitsParams& p, const SharedLayout& smem) {
    prefetch_tensor_map(&p.tma_q);
    prefetch_tensor_map(&p.tma_kv);
    u32 tile_counter = 0, q_counter = 0;
    for (int round = 0, position; (position = unit_position(round)) < num_units<C>(p); ++round) {
        const Unit unit = describe_unit<C::kRows, C::kBlockKv>(p, position);
        if (unit.tile_end == unit.tile_begin) continue;
        const u32 q_buffer = q_counter % C::kQBuffers;
        barrier_wait(smem.q_empty + q_buffer, ((q_counter / C::kQBuffers) & 1) ^ 1);
        barrier_arrive_expect_bytes(smem.q_full + q_buffer, C::kQBufferBytes);
        tma_load_3d(smem.q_tiles + q_buffer * C::kQBufferBytes, &p.tma_q, smem.q_full + q_buffer, 0, 0,
                    unit.first_row);
        ++q_counter;
        for (int tile = unit.tile_begin; tile < unit.tile_end; ++tile, ++tile_counter) {
            const u32 stage = tile_counter % C::kStages;
            barrier_wait(smem.kv_empty + stage, ((tile_counter / C::kStages) & 1) ^ 1);
            barrier_arrive_expect_bytes(smem.kv_full + stage, C::kKvStageBytes);
            tma_load_2d(smem.kv_tiles + stage * C::kKvStageBytes, &p.tma_kv, smem.kv_full + stage, 0,
                        tile * C::kBlockKv);
        }
    }
}

}  // namespace mqa_sm90

#include "sm90_consumer.cuh"

namespace mqa_sm90 {

__device__ __forceinline__ u32 dynamic_shared_bytes() {
    u32 bytes;
    asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
    return bytes;
}

// kCandidates: the mqa_topk family's kernel (its epilogue keeps candidates instead of storing logits).
template <class C, bool kCandidates = false>
__device__ __forceinline__ void sm90_mqa_logits_body(const MqaLogitsParams& p) {
    extern __shared__ __align__(1024) unsigned char raw_shared[];
    constexpr u32 kOutputBytes =
        OwnedResults<C::kRows, kCandidates ? Output::candidates : Output::dense, C::kMathGroups, C::kMTiles>::kSharedBytes;
    if (dynamic_shared_bytes() < C::kSharedBytes + kOutputBytes || p.heads != C::kHeads || p.head_dim != C::kHeadDim) {
        __trap();
    }
    const SharedLayout smem = carve_shared<C>(raw_shared);
    if (threadIdx.x == 0) init_pipeline_barriers(smem, C::kStages, C::kQBuffers, C::kMathGroups);
    __syncthreads();
    // Everything above touched only shared memory and the kernel parameters (grid_dependency.cuh).
    mqa_pdl::grid_dependency_wait();
    mqa_pdl::grid_dependents_may_launch();

    const int warpgroup = warp_uniform<C::kUniformWarpIndex>(static_cast<int>(threadIdx.x / 128));
    if (warpgroup == 0) {
        if constexpr (C::kMathGroups > 1) registers_release<C::kProducerRegisters>();
        if (threadIdx.x == 0) produce<C>(p, smem);
        return;
    }
    if constexpr (C::kMathGroups > 1) registers_claim<C::kMathRegisters>();
    if constexpr (kCandidates) {
        consume<C, Output::candidates>(p, smem, warpgroup - 1);
    } else if (p.logits_bf16 || p.compressed_columns > 0) {
        consume<C, Output::general>(p, smem, warpgroup - 1);
    } else {
        consume<C, Output::dense>(p, smem, warpgroup - 1);
    }
}

}  // namespace mqa_sm90

// Defines one extern "C" kernel for a variant; codegen writes only this line and the #include.
#define MQA_SM90_KERNEL(kernel_name, heads, head_dim, block_kv, rows, math_groups, stages)                   \
    extern "C" __global__ void __launch_bounds__((math_groups + 1) * 128, 1)                                  \
        kernel_name(const __grid_constant__ MqaLogitsParams p) {                                              \
        mqa_sm90::sm90_mqa_logits_body<mqa_sm90::Sm90Config<heads, head_dim, block_kv, rows, math_groups, stages>>( \
            p);                                                                                               \
    }
