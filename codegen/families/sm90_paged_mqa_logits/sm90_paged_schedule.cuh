#pragma once
// The decode kernel's schedule, computed on the device at every launch: the cache blocks every
// request needs (by its context length) are laid end to end and each CTA takes an equal run of
// them, which may span requests. A block-wide scan over the context lengths finds where a CTA's
// run starts, so the schedule needs no host step and no device memory of its own: a captured graph
// replays with new lengths. The producer and math warpgroups then walk the run request by request.

#include "paged_mqa_logits_params.cuh"
#include "sm90_primitives.cuh"

namespace mqa_sm90_paged {

__device__ __forceinline__ int clamp_index(int value, int low, int high) {
    return value < low ? low : (value > high ? high : value);
}

// How many keys token t of request b sees, within [0, max_context_len].
__device__ __forceinline__ int visible_keys(const PagedMqaLogitsParams& p, int request, int token) {
    const int keys = p.context_lens_2d
                         ? p.context_lens[static_cast<long long>(request) * p.context_lens_stride + token]
                         : p.context_lens[request] - p.next_n + token + 1;
    return clamp_index(keys, 0, p.max_context_len);
}

// Cache blocks request b needs: those its last-seeing token reads. With clean_logits a request
// that sees nothing still gets one (fully masked) block, whose CTA writes its -inf rows.
// `next_n` is the kernel's (it traps on another): the scan passes the constant C::kNextN, so its
// reads unroll and the code on the path to the first loads stays short.
// NOTES: the walkers pass p.next_n: with the constant there, ptxas moved the tile loop's stage math
// to the uniform datapath and its static stalls grew 6-13% at N >= 128 (CUDA 13.0, 2026-12-04).
template <class C>
__device__ __forceinline__ int request_blocks(const PagedMqaLogitsParams& p, int request, int next_n) {
    int keys = 0;
    if (p.context_lens_2d) {
        for (int t = 0; t < next_n; ++t) keys = max(keys, visible_keys(p, request, t));
    } else {
        keys = visible_keys(p, request, next_n - 1);
    }
    const int blocks = (keys + C::kBlockKv - 1) / C::kBlockKv;
    return p.clean_logits && blocks == 0 ? 1 : blocks;
}

__device__ __forceinline__ int block_table_entry(const PagedMqaLogitsParams& p, int request, int block) {
    return p.block_table[static_cast<long long>(request) * p.block_table_stride + block];
}

// A CTA's run of blocks: it starts at block `block` of request `request` and is `count` long.
struct Run {
    int request;
    int block;
    int count;
};

// One thread's slice of the requests in the scan, [first, last), and the blocks they need.
struct ScanSlice {
    int first;
    int last;
    int blocks;
};

// The scan's first step, on its own so the context-length reads are in flight before the kernel
// initializes its barriers (they are the first link in a chain of dependent reads at small batch).
template <class C>
__device__ __forceinline__ ScanSlice count_slice_blocks(const PagedMqaLogitsParams& p) {
    const int per_thread = (p.batch + C::kThreads - 1) / C::kThreads;
    ScanSlice slice;
    slice.first = min(p.batch, static_cast<int>(threadIdx.x) * per_thread);
    slice.last = min(p.batch, slice.first + per_thread);
    slice.blocks = 0;
    for (int b = slice.first; b < slice.last; ++b) slice.blocks += request_blocks<C>(p, b, C::kNextN);
    return slice;
}

// The block table's rows into L2, each thread of the grid a share of their 128-byte lines, while
// the context lengths are in flight: the entry a run starts at is then an L2 hit instead of the
// second of three dependent DRAM reads (context lengths, block table, keys) a small batch waits on.
// A row's lines are reached by stepping 32 entries from its start, plus its last needed entry.
// Shares go to a CTA's threads from its second-to-last warp down, then the last warp: at a small
// batch their scan slices are empty, so they reach this before the context lengths arrive (the
// threads holding requests wait for theirs), and the last warp, which initializes the barriers,
// takes a share only when the others are all busy.
// NOTES: measured on an H100 over distinct cache blocks (2026-12-06 night): 0.98-1.00x the time at
// batch 32 x 4k, 0.98-1.01x at batch 1, 1.01x at H=32 next_n=2 batch 128 x 4k, neutral elsewhere.
// (The evening's 0.94-0.97x was over shared blocks, partly read from L2.) The last warp taking the
// first shares was within 2% of this order.
template <class C>
__device__ __forceinline__ void prefetch_block_table(const PagedMqaLogitsParams& p) {
    constexpr int kEntriesPerLine = 32;
    const int columns = min(p.max_blocks, (p.max_context_len + C::kBlockKv - 1) / C::kBlockKv);
    if (columns <= 0) return;
    const unsigned steps = static_cast<unsigned>((columns - 1) / kEntriesPerLine + 2);
    const unsigned long long items = static_cast<unsigned long long>(p.batch) * steps;
    if (items >= (1ull << 31)) return;
    const unsigned rank = (2 * C::kThreads - 33 - threadIdx.x) % C::kThreads;
    const unsigned stride = gridDim.x * C::kThreads;
    for (unsigned item = blockIdx.x * C::kThreads + rank; item < items; item += stride) {
        const unsigned row = item / steps;
        const int entry = min(static_cast<int>(item % steps) * kEntriesPerLine, columns - 1);
        mqa_sm90::prefetch_l2(p.block_table + static_cast<long long>(row) * p.block_table_stride + entry);
    }
}

// Where the run of CTA `cta` starts: CTAs take total / grid blocks each, the first total % grid one
// more. 32-bit: the host bounds total below 2^31 (an int64 division is a call into code no warp has
// run yet, and it sat on the path to the first load).
__device__ __forceinline__ unsigned run_start(unsigned cta, unsigned share, unsigned extra) {
    return cta * share + min(cta, extra);
}

// The rest of the scan; every thread of the CTA takes part (before the warpgroups split). A shuffle
// scan inside each warp and a pass over the warp totals give every slice its first block, and the
// thread whose slice holds this CTA's first block finds the exact request and calls
// `on_found(run)` before the last __syncthreads, so whatever it starts overlaps that barrier.
template <class C, class OnFound>
__device__ __forceinline__ Run locate_run(const PagedMqaLogitsParams& p, const ScanSlice& slice, int* scratch,
                                          OnFound&& on_found) {
    constexpr int kWarps = C::kThreads / 32;
    int* warp_totals = scratch;
    Run* run = reinterpret_cast<Run*>(scratch + C::kThreads);
    const int thread = threadIdx.x;
    const int lane = thread % 32;
    const int warp = thread / 32;
    int inclusive = slice.blocks;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
        const int add = __shfl_up_sync(0xffffffffu, inclusive, offset);
        if (lane >= offset) inclusive += add;
    }
    if (lane == 31) warp_totals[warp] = inclusive;
    if (thread == 0) *run = Run{p.batch, 0, 0};
    __syncthreads();
    unsigned before_warp = 0, total = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
        const unsigned count = warp_totals[w];
        before_warp += w < warp ? count : 0;
        total += count;
    }
    const unsigned share = total / gridDim.x, extra = total % gridDim.x;
    const unsigned begin = run_start(blockIdx.x, share, extra);
    const unsigned end = run_start(blockIdx.x + 1, share, extra);
    const unsigned slice_begin = before_warp + inclusive - slice.blocks;
    if (begin < end && slice.blocks > 0 && slice_begin <= begin && begin < slice_begin + slice.blocks) {
        unsigned position = slice_begin;
        for (int b = slice.first; b < slice.last; ++b) {
            const int blocks = request_blocks<C>(p, b, C::kNextN);
            if (begin < position + blocks) {
                const Run found{b, static_cast<int>(begin - position), static_cast<int>(end - begin)};
                on_found(found);
                *run = found;
                break;
            }
            position += blocks;
        }
    }
    __syncthreads();
    return *run;
}

// The blocks of one request inside a CTA's run: [block_begin, block_end).
struct Segment {
    int request;
    int block_begin;
    int block_end;
};

// Walks a run request by request; producer and math warpgroups walk the same sequence.
template <class C>
struct RunWalker {
    Run left;

    __device__ __forceinline__ bool next(const PagedMqaLogitsParams& p, Segment& segment) {
        while (left.count > 0 && left.request < p.batch) {
            const int blocks = request_blocks<C>(p, left.request, p.next_n);
            const int begin = left.block;
            const int end = min(blocks, begin + left.count);
            ++left.request;
            left.block = 0;
            if (begin < end) {
                left.count -= end - begin;
                segment = Segment{left.request - 1, begin, end};
                return true;
            }
        }
        return false;
    }
};

}  // namespace mqa_sm90_paged
