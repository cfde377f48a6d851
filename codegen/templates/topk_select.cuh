#pragma once
// Exact top-k of each row of a logits matrix, inside the row's window [cu_starts, cu_ends) (clamped
// to [0, N)). One block per row (a grid-stride loop past gridDim.x):
//  1. Logits map to unsigned keys that order as the floats do (-0.0 taken as +0.0).
//  2. Radix digits (11, 11, 10 bits) over the window narrow down the k-th largest key, until the
//     keys at or above the digits found so far fit the shared candidate area (capacity slots;
//     only for windows of more than 2 k keys).
//  3. One more pass gathers those keys there, and the candidate select (topk_candidates.cuh) takes
//     the top k of them. The window is read twice when the first digit narrows enough, three
//     times when the second does.
//  4. Else (short windows, or many keys share the 22-bit prefix of the k-th) the third digit gives the k-th
//     largest key T and how many keys equal to it the selection takes, and one pass in index order
//     takes every key above T and the first of those equal to T.
// Either way, among equal logits at the k-th place the smaller key index wins. The selection is in
// key order, or with sort_by_logit logits descending, equal logits by index ascending.
// Slots past a window holding fewer than k keys get index -1 and logit -inf.
#include "grid_dependency.cuh"
#include "topk_candidates.cuh"

namespace mqa_topk {

// The window's keys [lo, hi) at or above the radix prefix into the gather slots, as many as
// radix_at_or_above() counted.
__device__ __forceinline__ void gather_at_or_above(const float* logits, int lo, int hi, const RadixProgress& progress,
                                                   const GatherSlots& slots, int capacity, int* counter) {
    if (threadIdx.x == 0) *counter = 0;
    __syncthreads();
    constexpr int kUnroll = 8;
    for (int base = lo + static_cast<int>(threadIdx.x); base - static_cast<int>(threadIdx.x) < hi;
         base += kUnroll * kThreads) {
        float value[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const int j = base + u * kThreads;
            value[u] = j < hi ? logits[j] : 0.f;
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const int j = base + u * kThreads;
            const bool keep = j < hi && (orderable_key(value[u]) & progress.prefix_mask) >= progress.prefix;
            append_candidate(slots, counter, capacity, keep, j, value[u]);
        }
    }
    __syncthreads();
}

// The window's top k in index order once the third digit gave the k-th key (threshold) and how
// many keys equal to it to take: a key above it goes after every taken key before it; a key equal
// to it is taken while fewer than take_equal equal keys came before.
template <class Take>
__device__ __forceinline__ void take_in_index_order(const float* logits, int lo, int hi, unsigned threshold,
                                                    int take_equal, RadixState& s, const Take& take) {
    int above_so_far = 0, equal_so_far = 0;  // the same in every thread
    float next = lo + static_cast<int>(threadIdx.x) < hi ? logits[lo + threadIdx.x] : 0.0f;
    for (int base = lo; base < hi; base += kThreads) {
        const int j = base + threadIdx.x;
        const unsigned key = orderable_key(next);
        // The next tile's load is issued before this tile's barriers.
        if (j + kThreads < hi) next = logits[j + kThreads];
        const bool above = j < hi && key > threshold;
        const bool equal = j < hi && key == threshold;
        if (!__syncthreads_or(above || equal)) continue;
        int total;
        const int before = block_exclusive_scan((above ? 1 : 0) | (equal ? 1 << 16 : 0), s.warp_sums, total);
        const int above_before = above_so_far + (before & 0xffff);
        const int equal_before = equal_so_far + (before >> 16);
        if (above) take(above_before + min(equal_before, take_equal), key, j);
        if (equal && equal_before < take_equal) take(above_before + equal_before, key, j);
        above_so_far += total & 0xffff;
        equal_so_far += total >> 16;
    }
}

__device__ __forceinline__ void select_row(const TopkSelectParams& p, int row, RadixState& s,
                                           const GatherSlots& slots, const CandidateArea& a, int* counter) {
    const float* logits = p.logits + row * p.logits_stride;
    const int lo = max(p.cu_starts[row], 0);
    const int hi = min(p.cu_ends[row], p.seq_len_kv);
    const int window = max(hi - lo, 0);
    const int k = p.k;
    const bool sort = p.sort_by_logit != 0;
    int* indices = p.indices + row * p.indices_stride;
    float* values = p.values != nullptr ? p.values + row * p.values_stride : nullptr;
    // Slot `slot` of the selection in key order: written out now, or kept for the sort.
    const auto take = [&](int slot, unsigned key, int index) {
        if (sort) {
            a.selection[slot] = selection_entry(key, index);
        } else {
            indices[slot] = index;
            if (values != nullptr) values[slot] = logit_of_key(key);
        }
    };

    bool written = false;
    if (window <= k) {
        for (int j = lo + threadIdx.x; j < hi; j += kThreads) take(j - lo, orderable_key(logits[j]), j);
    } else {
        const float* from = logits + lo;
        const auto key_at = [from](int i, unsigned& key) {
            key = orderable_key(from[i]);
            return true;
        };
        // NOTES: at windows up to 2 k, three digits and the pass in index order are faster (H200,
        // 2026-12-05: gathering took 1.15x their time at N = 4096, 0.95x at 8192, 0.77x at 32768).
        const bool may_gather = window > 2 * k;
        RadixProgress progress = radix_start(k);
        bool fits = false;
        for (int pass = 0; pass < 3 && !fits; ++pass) {
            radix_pass(window, key_at, pass, progress, s);
            fits = may_gather && radix_at_or_above(progress, k) <= p.capacity;
        }
        if (fits) {
            gather_at_or_above(logits, lo, hi, progress, slots, p.capacity, counter);
            const int gathered = radix_at_or_above(progress, k);
            unsigned smallest = 0u, largest = 0u;
            if (gathered > k) candidate_key_range<kThreads>(a, gathered, s, smallest, largest);
            write_top<kThreads>(a, gathered, k, smallest, largest, lo, hi, sort, indices, values, s, counter);
            written = true;
        } else {
            take_in_index_order(logits, lo, hi, progress.prefix, progress.remaining, s, take);
        }
    }
    const int count = min(window, k);
    if (sort && !written) {
        sort_selection(a.selection, count);
        for (int t = threadIdx.x; t < count; t += kThreads) {
            const unsigned long long entry = a.selection[t];
            indices[t] = static_cast<int>(0xffffffffu - static_cast<unsigned>(entry));
            if (values != nullptr) values[t] = logit_of_key(static_cast<unsigned>(entry >> 32));
        }
    }
    fill_empty_slots(indices, values, count, k);
    __syncthreads();  // the shared state is free for the next row
}

}  // namespace mqa_topk

// Blocks of kThreads that fill an SM's threads: the select kernels ask for as many (their registers
// would otherwise leave a quarter of the SM empty on sm_90).
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900)
#define MQA_TOPK_FULL_SM_BLOCKS 4
#else
#define MQA_TOPK_FULL_SM_BLOCKS 3
#endif

// Dynamic shared memory: MQA_TOPK_CANDIDATES_SHARED_BYTES(k, capacity).
#define MQA_TOPK_SELECT_KERNEL(name)                                                                          \
    extern "C" __global__ void __launch_bounds__(mqa_topk::kThreads, MQA_TOPK_FULL_SM_BLOCKS)                  \
        name(const TopkSelectParams p) {                                                                      \
        __shared__ mqa_topk::RadixState shared;                                                               \
        __shared__ int counter;                                                                               \
        extern __shared__ __align__(16) unsigned char raw[];                                                  \
        const mqa_topk::GatherSlots slots = mqa_topk::gather_slots(raw, p.k, p.capacity);                     \
        const mqa_topk::CandidateArea area = mqa_topk::ranking_area(raw, slots.ordered, slots.keys);           \
        mqa_pdl::grid_dependency_wait();                                                                      \
        for (int row = blockIdx.x; row < p.rows; row += gridDim.x) {                                          \
            if (p.only_rows == nullptr || p.only_rows[row] != 0)                                              \
                mqa_topk::select_row(p, row, shared, slots, area, &counter);                                  \
        }                                                                                                     \
    }
