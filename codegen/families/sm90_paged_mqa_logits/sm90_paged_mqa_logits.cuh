#pragma once
// The sm_90a paged_mqa_logits (decode) kernel family: the keys of every request are read from the
// paged cache by TMA (one cache block per pipeline stage, its scales beside it), wgmma (e4m3)
// computes keys x Q^T for all next_n tokens and heads of a request at once, and the relu / weight /
// head-sum / scale epilogue runs in registers. Variant `pwgmma64x<N>x32_bkv<B>_r<next_n>_w<W>_lds<S>`
// instantiates PagedConfig<H, D, B, next_n, W, S>.
//
// Work: each CTA of the grid takes an equal run of the cache blocks all requests need, found on the
// device at every launch (sm90_paged_schedule.cuh).
// Block: warps 0..W-1 are producers, one per math warpgroup (its lanes read the block table, lane 0
// issues the loads of its warpgroup's stages; warp 0 also loads Q); warpgroups 1..W do math and
// take the run's blocks in turn. A producer per warpgroup keeps each stage ring independent: a
// warpgroup that lags holds back only its own loads.

#include "grid_dependency.cuh"
#include "paged_mqa_logits_params.cuh"
#include "sm90_epilogue.cuh"
#include "sm90_paged_schedule.cuh"
#include "sm90_primitives.cuh"
#include "sm90_wgmma.cuh"

namespace mqa_sm90_paged {

using mqa_sm90::u32;
using mqa_sm90::u64;

constexpr int min_constexpr(int a, int b) { return a < b ? a : b; }

template <int kHeads_, int kHeadDim_, int kBlockKv_, int kNextN_, int kMathGroups_, int kStages_,
          int kBlocksPerSm_ = 1>
struct PagedConfig {
    static constexpr int kHeads = kHeads_;
    static constexpr int kHeadDim = kHeadDim_;
    static constexpr int kBlockKv = kBlockKv_;  // tokens per cache block = keys per stage
    static constexpr int kNextN = kNextN_;
    static constexpr int kMathGroups = kMathGroups_;
    static constexpr int kStages = kStages_;
    static constexpr int kBlocksPerSm = kBlocksPerSm_;  // CTAs resident per SM (launch bounds)

    static constexpr int kN = kNextN * kHeads;  // the wgmma N side: (token, head)
    // The quad reduction works on 1, 2 or 4 rows; three tokens reduce as four with an empty one.
    static constexpr int kReduceRows = kNextN == 3 ? 4 : kNextN;
    static constexpr int kMTiles = kBlockKv / 64;
    static constexpr int kKSteps = kHeadDim / 32;
    static constexpr int kNBlocks = kN / 8;
    static constexpr int kThreads = (kMathGroups + 1) * 128;

    static constexpr u32 kKeyStageBytes = kBlockKv * kHeadDim;
    static constexpr u32 kScaleStageBytes = kBlockKv * 4;
    static constexpr u32 kQBufferBytes = kN * kHeadDim;
    static constexpr int kQBuffers = 2;
    static constexpr u32 kBarrierBytes = 8 * (2 * kStages + 2 * kQBuffers);
    static constexpr u32 kScheduleBytes = 4 * (kThreads + 4);
    // NOTES: +1024 so the key ring and Q buffers can start on a 1024-byte boundary (128B swizzle).
    static constexpr u32 kSharedBytes = 1024 + kStages * kKeyStageBytes + kQBuffers * kQBufferBytes +
                                        kStages * kScaleStageBytes + kBarrierBytes + kScheduleBytes;

    // Register split (setmaxnreg): the entry allocation is what launch bounds leave each thread;
    // the producer warpgroup gives most of its share to the math warpgroups.
    static constexpr int kEntryRegisters = (65536 / (kThreads * kBlocksPerSm)) / 8 * 8;
    static constexpr int kProducerRegisters = kEntryRegisters >= 160 ? 40 : 24;
    static constexpr int kMathRegisters =
        min_constexpr(232, ((kEntryRegisters * (kMathGroups + 1) - kProducerRegisters) / kMathGroups) / 8 * 8);
    // NOTES: with three or four math warpgroups the launch bound leaves 128 or 96 registers a
    // thread, and setmaxnreg there makes ptxas spill (84 B at 512 threads, CUDA 13.0) although the
    // math path fits the entry allotment without it (75 registers at N = 64): only two reallocate.
    static constexpr bool kReallocates = kMathGroups == 2 && kEntryRegisters < 232;
    static constexpr int kMathThreadRegisters = kReallocates ? kMathRegisters : min_constexpr(255, kEntryRegisters);

    static_assert(kHeadDim == 64 || kHeadDim == 128, "head_dim 64 or 128");
    static_assert(kBlockKv == 64 || kBlockKv == 128, "block_kv 64 or 128");
    static_assert(kNextN >= 1 && kNextN <= 4, "next_n 1 to 4");
    static_assert(kHeads % 8 == 0 && kN % 32 == 0 && kN <= 256, "next_n x heads must be a multiple of 32 up to 256");
    static_assert(kMathGroups >= 1 && kMathGroups <= 4, "1 to 4 math warpgroups (a producer warp each)");
    static_assert(kBlocksPerSm == 1 || kBlocksPerSm == 2, "one or two CTAs per SM");
    static_assert(kMathThreadRegisters >= kMTiles * kN / 2 + kN / 4 + 24, "too few registers for the accumulators and weights");
    static_assert(kStages % kMathGroups == 0, "each stage must always serve the same math warpgroup");
    static_assert(kMTiles * kN / 2 <= 128, "accumulators per thread must stay within 128 registers");
};

struct SharedLayout {
    unsigned char* key_tiles;
    unsigned char* q_tiles;
    float* scales;
    u64* kv_full;
    u64* kv_empty;
    u64* q_full;
    u64* q_empty;
    int* schedule;
};

template <class C>
__device__ __forceinline__ SharedLayout carve_shared(unsigned char* raw) {
    const u32 misalignment = mqa_sm90::shared_address(raw) & 1023u;
    unsigned char* base = raw + (misalignment == 0 ? 0 : 1024 - misalignment);
    SharedLayout layout;
    layout.key_tiles = base;
    layout.q_tiles = base + C::kStages * C::kKeyStageBytes;
    layout.scales = reinterpret_cast<float*>(layout.q_tiles + C::kQBuffers * C::kQBufferBytes);
    u64* barriers = reinterpret_cast<u64*>(layout.scales + C::kStages * C::kBlockKv);
    layout.kv_full = barriers;
    layout.kv_empty = barriers + C::kStages;
    layout.q_full = barriers + 2 * C::kStages;
    layout.q_empty = barriers + 2 * C::kStages + C::kQBuffers;
    layout.schedule = reinterpret_cast<int*>(barriers + 2 * C::kStages + 2 * C::kQBuffers);
    return layout;
}

// Q of `request` into Q buffer `q_buffer`.
template <class C>
__device__ __forceinline__ void load_q(const PagedMqaLogitsParams& p, const SharedLayout& smem, u32 q_buffer,
                                       int request) {
    mqa_sm90::barrier_arrive_expect_bytes(smem.q_full + q_buffer, C::kQBufferBytes);
    mqa_sm90::tma_load_3d(smem.q_tiles + q_buffer * C::kQBufferBytes, &p.tma_q, smem.q_full + q_buffer, 0, 0, request);
}

// The L2 policy of the cache blocks' loads. Each block is read once, so where the call reads at most
// kEvictFirstBytes (bounded on the host's numbers: every request at max_context_len) they are
// evict-first: they replace one another in L2 instead of what the kernels before left there, whose
// dirty lines would otherwise be written back during the call, sharing the DRAM with the keys.
// NOTES (H100, 2026-12-06, kernel_ab over distinct blocks after a 256 MiB memset, docs/PERFORMANCE.md
// stop 45): evict-first everywhere took 0.93-0.94x the time at batch 32 x 4k-32k, 0.95x at batch
// 1 x 128k, 0.97-1.00x where the call reads 0.3-1.1 GB and 1.01-1.02x at 2.2 GB (H=64 next_n=2,
// batch 128 x 128k and 512 x 32k): hence the bound. Above it plain (unhinted) loads measured
// 0.998-1.000x these hinted loads with the normal policy (stop 46), so one load path serves both.
constexpr long long kEvictFirstBytes = 1ll << 30;

// NOTES: divides by the kernel's block size (a shift); by p.block_kv it was an int64 division, a
// call into a cold subroutine on the path to the first load and in the producer's loop. Computed
// once per producer instead of per block it timed the same (0.996-1.003x, one row 1.021x; H100,
// stop 47) and held registers the producer's 40 are short of: per block it stays.
template <class C>
__device__ __forceinline__ u64 cache_block_policy(const PagedMqaLogitsParams& p) {
    const long long blocks_per_request = (static_cast<long long>(p.max_context_len) + C::kBlockKv - 1) / C::kBlockKv;
    const long long bound = static_cast<long long>(p.batch) * blocks_per_request * p.cache_block_bytes;
    return bound <= kEvictFirstBytes ? mqa_sm90::l2_evict_first_policy() : mqa_sm90::l2_evict_normal_policy();
}

// The keys and scales of cache block `cache_block` into stage `stage` (cache_block_policy()).
// NOTES: a block index outside the cache reads as zeros (TMA bounds), never faults.
template <class C>
__device__ __forceinline__ void load_block(const PagedMqaLogitsParams& p, const SharedLayout& smem, u32 stage,
                                           int cache_block) {
    using namespace mqa_sm90;
    const u64 policy = cache_block_policy<C>(p);
    barrier_arrive_expect_bytes(smem.kv_full + stage, C::kKeyStageBytes + C::kScaleStageBytes);
    tma_load_3d_hinted(smem.key_tiles + stage * C::kKeyStageBytes, &p.tma_keys, smem.kv_full + stage, 0, 0,
                       cache_block, policy);
    tma_load_2d_hinted(smem.scales + stage * C::kBlockKv, &p.tma_scales, smem.kv_full + stage, 0, cache_block, policy);
}

// Warp `producer` of warpgroup 0 feeds math warpgroup `producer`: its lanes read 32 block-table
// entries at a time, lane 0 issues the loads of the blocks that warpgroup takes (every W-th), in the
// order it consumes them. Producer 0 also loads each request's Q. The run's first Q and first
// block are the scan's (sm90_paged_mqa_logits_body).
template <class C>
__device__ __forceinline__ void produce(const PagedMqaLogitsParams& p, const SharedLayout& smem, Run run,
                                        int producer) {
    using namespace mqa_sm90;
    const int lane = threadIdx.x % 32;
    u32 tile_counter = 0, q_counter = 0;
    RunWalker<C> walker{run};
    Segment segment;
    while (walker.next(p, segment)) {
        if (producer == 0 && lane == 0 && q_counter != 0) {
            const u32 q_buffer = q_counter % C::kQBuffers;
            barrier_wait(smem.q_empty + q_buffer, ((q_counter / C::kQBuffers) & 1) ^ 1);
            load_q<C>(p, smem, q_buffer, segment.request);
        }
        ++q_counter;
        const int* table = p.block_table + static_cast<long long>(segment.request) * p.block_table_stride;
        for (int base = segment.block_begin; base < segment.block_end; base += 32) {
            const int count = min(32, segment.block_end - base);
            const int entry = lane < count ? table[base + lane] : 0;
            for (int i = 0; i < count; ++i, ++tile_counter) {
                if (static_cast<int>(tile_counter % C::kMathGroups) != producer) continue;  // warp-uniform
                const int cache_block = __shfl_sync(0xffffffffu, entry, i);
                if (lane == 0 && tile_counter != 0) {
                    const u32 stage = tile_counter % C::kStages;
                    barrier_wait(smem.kv_empty + stage, ((tile_counter / C::kStages) & 1) ^ 1);
                    load_block<C>(p, smem, stage, cache_block);
                }
            }
        }
    }
}

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
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < C::kKSteps; ++k) {
            const u64 b_descriptor = descriptor_from_low<C::kHeadDim>(q_descriptor + k * 32 / 16);
#pragma unroll
            for (int m = 0; m < C::kMTiles; ++m) {
                const u64 a_descriptor =
                    descriptor_from_low<C::kHeadDim>(key_tile + (m * 64 * C::kHeadDim + k * 32) / 16);
                Wgmma<C::kN>::run(acc[m], a_descriptor, b_descriptor, k > 0 ? 1 : 0);
            }
        }
        wgmma_commit();
    }

    __device__ __forceinline__ void release(Accumulators& acc, u32 counter) const {
        using namespace mqa_sm90;
#pragma unroll
        for (int m = 0; m < C::kMTiles; ++m)
#pragma unroll
            for (int i = 0; i < C::kN / 2; ++i) fence_operand(acc[m][i]);
        __syncwarp();
        if (lane == 0) barrier_arrive(smem.kv_empty + counter % C::kStages);
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

template <class C>
__device__ __forceinline__ void consume(const PagedMqaLogitsParams& p, const SharedLayout& smem, int math_group,
                                        Run run) {
    using namespace mqa_sm90;
    PagedMathGroup<C> group(p, smem);
    const int math_thread = math_group * 128 + threadIdx.x % 128;
    float acc[C::kMTiles][C::kN / 2];
    float scale[C::kMTiles][2];

    u32 tile_counter = 0, q_counter = 0;
    RunWalker<C> walker{run};
    Segment segment;
    while (walker.next(p, segment)) {
        group.load_request(segment.request);
        const u32 q_buffer = q_counter % C::kQBuffers;
        barrier_wait(smem.q_full + q_buffer, (q_counter / C::kQBuffers) & 1);
        group.q_descriptor = descriptor_low<C::kHeadDim>(smem.q_tiles + q_buffer * C::kQBufferBytes);

        const int blocks = segment.block_end - segment.block_begin;
        const int first = static_cast<int>((static_cast<u32>(math_group) + C::kMathGroups -
                                            tile_counter % C::kMathGroups) % C::kMathGroups);
        for (int t = first; t < blocks; t += C::kMathGroups) {
            group.issue(acc, scale, tile_counter + t);
            wgmma_wait<0>();
            group.release(acc, tile_counter + t);
            group.epilogue(acc, scale, segment.block_begin + t);
        }
        tile_counter += blocks;
        if (p.clean_logits && segment.block_end == request_blocks<C>(p, segment.request, p.next_n))
            fill_tail<C>(p, segment.request, segment.block_end * C::kBlockKv, math_thread);
        __syncwarp();
        if (group.lane == 0) barrier_arrive(smem.q_empty + q_buffer);
        ++q_counter;
    }
}

__device__ __forceinline__ u32 dynamic_shared_bytes() {
    u32 bytes;
    asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
    return bytes;
}

template <class C>
__device__ __forceinline__ void sm90_paged_mqa_logits_body(const PagedMqaLogitsParams& p) {
    using namespace mqa_sm90;
    extern __shared__ __align__(1024) unsigned char raw_shared[];
    if (dynamic_shared_bytes() < C::kSharedBytes || p.heads != C::kHeads || p.head_dim != C::kHeadDim ||
        p.next_n != C::kNextN || p.block_kv != C::kBlockKv)
        __trap();
    const SharedLayout smem = carve_shared<C>(raw_shared);
    // NOTES: the last warp initializes the barriers: its scan slice is empty unless the batch nearly
    // fills every slice, while thread 0 holds request 0, whose context length is on the path to the
    // first loads.
    const auto initialize = [&] {
        if (threadIdx.x == C::kThreads - 32) {
            prefetch_tensor_map(&p.tma_q);
            prefetch_tensor_map(&p.tma_keys);
            prefetch_tensor_map(&p.tma_scales);
            init_pipeline_barriers(smem, C::kStages, C::kQBuffers, C::kMathGroups);
        }
    };
    // Launched with PDL, what touches no global memory runs while the previous kernel finishes;
    // otherwise the context-length reads come first: they start the chain of dependent reads a
    // small batch is made of (grid_dependency.cuh).
    if (p.programmatic_launch) initialize();
    mqa_pdl::grid_dependency_wait();
    mqa_pdl::grid_dependents_may_launch();
    const ScanSlice slice = count_slice_blocks<C>(p);
    prefetch_block_table<C>(p);
    if (!p.programmatic_launch) initialize();
    // The thread that finds the run issues its first Q and reads its first block-table entry before
    // the scan's last barrier, then loads that block; produce() skips both.
    // NOTES: a CTA with few blocks is a chain of dependent reads (context lengths, block table, keys),
    // and code no warp has run yet lengthens it: the producer warp reached its own first loads about
    // 1,600 cycles after the scan (H200, batch 1). docs/PERFORMANCE.md, 2026-12-04 and its evening.
    bool found_run = false;
    int first_cache_block = 0;
    const Run run = locate_run<C>(p, slice, smem.schedule, [&](const Run& found) {
        found_run = true;
        load_q<C>(p, smem, 0, found.request);
        first_cache_block = block_table_entry(p, found.request, found.block);
    });  // its __syncthreads also publish the barriers
    if (found_run) load_block<C>(p, smem, 0, first_cache_block);

    // NOTES: warp-uniform, measured on the H200 (2026-12-03): 8-9% faster at next_n=4 H=64, 2% slower
    // at next_n=2 H=64, neutral at H=32.
    const int warpgroup = mqa_sm90::warp_uniform<true>(static_cast<int>(threadIdx.x / 128));
    if (warpgroup == 0) {
        if constexpr (C::kReallocates) registers_release<C::kProducerRegisters>();
        if (threadIdx.x < 32 * C::kMathGroups) produce<C>(p, smem, run, threadIdx.x / 32);
        return;
    }
    if constexpr (C::kReallocates) registers_claim<C::kMathRegisters>();
    consume<C>(p, smem, warpgroup - 1, run);
}

}  // namespace mqa_sm90_paged

// Defines one extern "C" kernel for a variant; codegen writes only this line and the #include.
#define MQA_SM90_PAGED_KERNEL(kernel_name, heads, head_dim, block_kv, next_n, math_groups, stages, blocks_per_sm) \
    extern "C" __global__ void __launch_bounds__((math_groups + 1) * 128, blocks_per_sm)                              \
        kernel_name(const __grid_constant__ PagedMqaLogitsParams p) {                                                 \
        mqa_sm90_paged::sm90_paged_mqa_logits_body<                                                                   \
            mqa_sm90_paged::PagedConfig<heads, head_dim, block_kv, next_n, math_groups, stages, blocks_per_sm>>(p);   \
    }
