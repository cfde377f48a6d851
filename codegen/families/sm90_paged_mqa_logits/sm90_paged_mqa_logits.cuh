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
#include "sm90_paged_config.cuh"
#include "sm90_paged_math.cuh"
#include "sm90_paged_schedule.cuh"
#include "sm90_primitives.cuh"

namespace mqa_sm90_paged {

using mqa_sm90::u32;
using mqa_sm90::u64;

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
// Above the bound the loads carry no hint.
// NOTES (H100, 2026-12-06, kernel_ab over distinct blocks after a 256 MiB memset, docs/PERFORMANCE.md
// stop 45): evict-first everywhere took 0.93-0.94x the time at batch 32 x 4k-32k, 0.95x at batch
// 1 x 128k, 0.97-1.00x where the call reads 0.3-1.1 GB and 1.01-1.02x at 2.2 GB (H=64 next_n=2,
// batch 128 x 128k and 512 x 32k): hence the bound. Above it, loads hinted with the normal policy
// timed as plain loads on the H100 (stop 46) but took 1.12-1.13x their time on an H200 (kernel_ab,
// batch 128 x 128k, 512 x 32k and 2048 x 4k at next_n = 1; stop 50), where evict-first above the
// bound timed within 1% of plain loads.
constexpr long long kEvictFirstBytes = 1ll << 30;

// NOTES: divides by the kernel's block size (a shift); by p.block_kv it was an int64 division, a
// call into a cold subroutine on the path to the first load and in the producer's loop. Computed
// once per producer instead of per block it timed the same (0.996-1.003x, one row 1.021x; H100,
// stop 47) and held registers the producer's 40 are short of: per block it stays.
template <class C>
__device__ __forceinline__ bool evict_first_loads(const PagedMqaLogitsParams& p) {
    const long long blocks_per_request = (static_cast<long long>(p.max_context_len) + C::kBlockKv - 1) / C::kBlockKv;
    const long long bound = static_cast<long long>(p.batch) * blocks_per_request * p.cache_block_bytes;
    return bound <= kEvictFirstBytes;
}

// The keys and scales of cache block `cache_block` into stage `stage` (evict_first_loads()).
// NOTES: a block index outside the cache reads as zeros (TMA bounds), never faults.
template <class C>
__device__ __forceinline__ void load_block(const PagedMqaLogitsParams& p, const SharedLayout& smem, u32 stage,
                                           int cache_block) {
    using namespace mqa_sm90;
    barrier_arrive_expect_bytes(smem.kv_full + stage, C::kKeyStageBytes + C::kScaleStageBytes);
    if (evict_first_loads<C>(p)) {
        const u64 policy = l2_evict_first_policy();
        tma_load_3d_hinted(smem.key_tiles + stage * C::kKeyStageBytes, &p.tma_keys, smem.kv_full + stage, 0, 0,
                           cache_block, policy);
        tma_load_2d_hinted(smem.scales + stage * C::kBlockKv, &p.tma_scales, smem.kv_full + stage, 0, cache_block,
                           policy);
    } else {
        tma_load_3d(smem.key_tiles + stage * C::kKeyStageBytes, &p.tma_keys, smem.kv_full + stage, 0, 0, cache_block);
        tma_load_2d(smem.scales + stage * C::kBlockKv, &p.tma_scales, smem.kv_full + stage, 0, cache_block);
    }
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
