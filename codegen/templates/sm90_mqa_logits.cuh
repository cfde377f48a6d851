#pragma once
// The sm_90a MQA-logits kernel family: TMA loads into a shared-memory ring, wgmma (e4m3) on
// KV x Q^T, and the relu / weight / head-sum / scale epilogue in registers, with the -inf fill
// fused in. Variant `wgmma64x<N>x32_bkv<B>_r<R>_w<W>_lds<S>` instantiates Sm90Config<H, D, B, R, W, S>.
//
// Block: warpgroup 0 is the producer (one thread issues every TMA load); warpgroups 1..W do math.
// Work: a persistent grid walks units (q-block, KV split) round robin. Inside a unit, the KV tiles
// that meet the q-block's windows are computed; math warpgroups take whole tiles in turn, so one
// warpgroup's epilogue overlaps another's wgmma.

#include "mqa_logits_params.cuh"
#include "sm90_primitives.cuh"
#include "sm90_wgmma.cuh"
#include "sm90_epilogue.cuh"

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
    static constexpr int kKSteps = kHeadDim / 32;
    static constexpr int kNBlocks = kN / 8;
    static constexpr int kThreads = (kMathGroups + 1) * 128;

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

    static_assert(kHeadDim == 64 || kHeadDim == 128, "head_dim 64 or 128");
    static_assert(kBlockKv == 64 || kBlockKv == 128, "bkv 64 or 128");
    static_assert(kN == 64 || kN == 128 || kN == 256, "N = rows x heads must be 64, 128 or 256");
    static_assert(kHeads % 8 == 0, "heads must be a multiple of 8");
    static_assert(kMathGroups >= 1 && kMathGroups <= 4, "1 to 4 math warpgroups");
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

template <int kRows, int kBlockKv>
__device__ __forceinline__ Unit describe_unit(const MqaLogitsParams& p, int unit_index) {
    Unit unit;
    const int split = unit_index % p.num_kv_splits;
    unit.q_block = unit_index / p.num_kv_splits;
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
    for (int unit_index = blockIdx.x; unit_index < num_units<C>(p); unit_index += gridDim.x) {
        const Unit unit = describe_unit<C::kRows, C::kBlockKv>(p, unit_index);
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

// Writes -inf to the unit's columns outside its computed tiles; math threads share the work.
template <class C>
__device__ __forceinline__ void fill_uncomputed(const MqaLogitsParams& p, const Unit& unit, int math_thread) {
    const float negative_infinity = -__int_as_float(0x7f800000);
    const int computed_begin = min(unit.col_end, unit.tile_begin * C::kBlockKv);
    const int computed_end = unit.tile_end == unit.tile_begin ? computed_begin
                                                              : min(unit.col_end, unit.tile_end * C::kBlockKv);
    constexpr int kMathThreads = C::kMathGroups * 128;
    for (int r = 0; r < C::kRows; ++r) {
        const int row = unit.first_row + r;
        if (row >= p.seq_len) break;
        float* out = p.logits + static_cast<long long>(row) * p.logits_stride_s;
        for (int col = unit.col_begin + math_thread; col < computed_begin; col += kMathThreads)
            out[col] = negative_infinity;
        for (int col = computed_end + math_thread; col < unit.col_end; col += kMathThreads)
            out[col] = negative_infinity;
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

template <class C>
__device__ __forceinline__ void consume(const MqaLogitsParams& p, const SharedLayout& smem, int math_group) {
    const int lane = threadIdx.x % 32;
    const int warp_in_group = (threadIdx.x / 32) % 4;
    const int group_row = lane / 4;   // accumulator row inside the warp's 16
    const int quad_lane = lane % 4;   // which column pair of each 8-column block
    const int math_thread = math_group * 128 + threadIdx.x % 128;
    using Reduction = QuadReduction<C::kRows>;

    float acc[C::kMTiles][C::kN / 2];
    ThreadWeights<C> weights;
    OwnedResults<C::kRows> owned;

    u32 tile_counter = 0, q_counter = 0;
    for (int unit_index = blockIdx.x; unit_index < num_units<C>(p); unit_index += gridDim.x) {
        const Unit unit = describe_unit<C::kRows, C::kBlockKv>(p, unit_index);
        if (p.clean_logits) fill_uncomputed<C>(p, unit, math_thread);
        if (unit.tile_end == unit.tile_begin) continue;

        weights.load(p, unit, quad_lane, smem.weights, math_group);
        owned.load(p, unit.first_row, quad_lane);

        const u32 q_buffer = q_counter % C::kQBuffers;
        barrier_wait(smem.q_full + q_buffer, (q_counter / C::kQBuffers) & 1);
        const unsigned char* q_tile = smem.q_tiles + q_buffer * C::kQBufferBytes;

        // Tiles go to the math warpgroups in turn, counted across units: this group's first one here.
        const int unit_tiles = unit.tile_end - unit.tile_begin;
        const int first_own = static_cast<int>((static_cast<u32>(math_group) + C::kMathGroups -
                                                tile_counter % C::kMathGroups) % C::kMathGroups);
        for (int t = first_own; t < unit_tiles; t += C::kMathGroups) {
            const u32 counter = tile_counter + t;
            const int tile = unit.tile_begin + t;
            const u32 stage = counter % C::kStages;
            const unsigned char* kv_tile = smem.kv_tiles + stage * C::kKvStageBytes;

            float scale[C::kMTiles][2];
#pragma unroll
            for (int m = 0; m < C::kMTiles; ++m) {
                const int col = tile * C::kBlockKv + m * 64 + warp_in_group * 16 + group_row;
                scale[m][0] = col < p.seq_len_kv ? p.kv_scales[col] : 0.f;
                scale[m][1] = col + 8 < p.seq_len_kv ? p.kv_scales[col + 8] : 0.f;
            }

            barrier_wait(smem.kv_full + stage, (counter / C::kStages) & 1);
            wgmma_fence();
#pragma unroll
            for (int k = 0; k < C::kKSteps; ++k) {
                const u64 b_descriptor = matrix_descriptor<C::kHeadDim>(q_tile + k * 32);
#pragma unroll
                for (int m = 0; m < C::kMTiles; ++m) {
                    const u64 a_descriptor =
                        matrix_descriptor<C::kHeadDim>(kv_tile + m * 64 * C::kHeadDim + k * 32);
                    Wgmma<C::kN>::run(acc[m], a_descriptor, b_descriptor, k > 0 ? 1 : 0);
                }
            }
            wgmma_commit();
            wgmma_wait<0>();
#pragma unroll
            for (int m = 0; m < C::kMTiles; ++m)
#pragma unroll
                for (int i = 0; i < C::kN / 2; ++i) fence_operand(acc[m][i]);
            __syncwarp();
            if (lane == 0) barrier_arrive(smem.kv_empty + stage);

#pragma unroll
            for (int m = 0; m < C::kMTiles; ++m) {
                float sums[2 * C::kRows];  // [row * 2 + half]
#pragma unroll
                for (int i = 0; i < 2 * C::kRows; ++i) sums[i] = 0.f;
#pragma unroll
                for (int block = 0; block < C::kNBlocks; ++block) {
                    const int r = block * 8 / C::kHeads;
                    const float2 w = weights.get(block);
                    sums[2 * r] = fmaf(w.x, fmaxf(acc[m][block * 4 + 0], 0.f), sums[2 * r]);
                    sums[2 * r] = fmaf(w.y, fmaxf(acc[m][block * 4 + 1], 0.f), sums[2 * r]);
                    sums[2 * r + 1] = fmaf(w.x, fmaxf(acc[m][block * 4 + 2], 0.f), sums[2 * r + 1]);
                    sums[2 * r + 1] = fmaf(w.y, fmaxf(acc[m][block * 4 + 3], 0.f), sums[2 * r + 1]);
                }
                reduce_quad<C::kRows>(sums, quad_lane);
                const int base_col = tile * C::kBlockKv + m * 64 + warp_in_group * 16 + group_row;
#pragma unroll
                for (int k = 0; k < Reduction::kHeld; ++k)
                    owned.store(p, k, base_col, sums[k] * (owned.half[k] ? scale[m][1] : scale[m][0]));
            }
        }
        tile_counter += unit_tiles;
        __syncwarp();
        if (lane == 0) barrier_arrive(smem.q_empty + q_buffer);
        ++q_counter;
    }
}

__device__ __forceinline__ u32 dynamic_shared_bytes() {
    u32 bytes;
    asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
    return bytes;
}

template <class C>
__device__ __forceinline__ void sm90_mqa_logits_body(const MqaLogitsParams& p) {
    extern __shared__ __align__(1024) unsigned char raw_shared[];
    if (dynamic_shared_bytes() < C::kSharedBytes || p.heads != C::kHeads || p.head_dim != C::kHeadDim) __trap();
    const SharedLayout smem = carve_shared<C>(raw_shared);
    if (threadIdx.x == 0) {
        for (int s = 0; s < C::kStages; ++s) {
            barrier_init(smem.kv_full + s, 1);
            barrier_init(smem.kv_empty + s, 4);  // one arrival per warp of the consuming warpgroup
        }
        for (int b = 0; b < C::kQBuffers; ++b) {
            barrier_init(smem.q_full + b, 1);
            barrier_init(smem.q_empty + b, 4 * C::kMathGroups);
        }
        fence_barrier_init();
    }
    __syncthreads();

    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        if constexpr (C::kMathGroups > 1) registers_release<C::kProducerRegisters>();
        if (threadIdx.x == 0) produce<C>(p, smem);
        return;
    }
    if constexpr (C::kMathGroups > 1) registers_claim<C::kMathRegisters>();
    consume<C>(p, smem, warpgroup - 1);
}

}  // namespace mqa_sm90

// Defines one extern "C" kernel for a variant; codegen writes only this line and the #include.
#define MQA_SM90_KERNEL(kernel_name, heads, head_dim, block_kv, rows, math_groups, stages)                   \
    extern "C" __global__ void __launch_bounds__((math_groups + 1) * 128, 1)                                  \
        kernel_name(const __grid_constant__ MqaLogitsParams p) {                                              \
        mqa_sm90::sm90_mqa_logits_body<mqa_sm90::Sm90Config<heads, head_dim, block_kv, rows, math_groups, stages>>( \
            p);                                                                                               \
    }
