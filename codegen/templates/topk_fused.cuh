#pragma once
// The fused path of mqa_topk, around the twgmma kernel (codegen/families/sm90_mqa_topk), which
// keeps per row the logits not below a threshold instead of storing them all:
//  1. mqa_topk_sample: every sample_stride-th key of kv (and its scale) into a dense sample, and
//     each row's window in sample keys. mqa_logits then scores the sample.
//  2. mqa_topk_thresholds: per row, a threshold the row's top k should clear with room to spare:
//     the sample logit of rank oversample x k x (sample window / window) (to 2^-13), so that about
//     oversample x k keys of the whole window reach it. A window that fits the buffer keeps all
//     (threshold -inf, its count set to the window's size: each key takes the slot of its place).
//  3. (the twgmma kernel appends the candidates.)
//  4. mqa_topk_candidates: per row, exact top k of the candidates when they hold it: at least
//     min(k, window) of them (so the k-th largest logit of the window is at or above the
//     threshold and every key of the top k is a candidate) and no more than the buffer keeps.
//     Otherwise the row is marked failed and the unfused path computes it. The selection is then
//     written in key order (a bitmap of the window gives each key its rank) or sorted by logit.
// The rule for ties is the select kernel's: among equal logits at the k-th place, smaller keys.

#include "topk_fused_params.cuh"
#include "topk_select.cuh"

namespace mqa_topk {

__device__ __forceinline__ void clamp_window(const int* starts, const int* ends, int row, int n, int& lo, int& hi) {
    lo = min(max(starts[row], 0), n);
    hi = min(max(ends[row], 0), n);
    if (hi < lo) hi = lo;
}

__device__ __forceinline__ int ceil_div_int(int a, int b) { return (a + b - 1) / b; }

__device__ __forceinline__ void sample_kv(const TopkFusedParams& p) {
    const long long thread = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
    const int chunks_per_row = p.head_dim / 16;
    const long long chunks = static_cast<long long>(p.sample_len) * chunks_per_row;
    for (long long c = thread; c < chunks; c += threads) {
        const long long i = c / chunks_per_row, part = c % chunks_per_row;
        const uint4* from = reinterpret_cast<const uint4*>(p.kv + i * p.sample_stride * p.kv_stride) + part;
        reinterpret_cast<uint4*>(p.sample_kv + i * p.head_dim)[part] = *from;
    }
    for (long long i = thread; i < p.sample_len; i += threads) p.sample_scales[i] = p.kv_scales[i * p.sample_stride];
    for (long long row = thread; row < p.rows; row += threads) {
        int lo, hi;
        clamp_window(p.cu_starts, p.cu_ends, static_cast<int>(row), p.seq_len_kv, lo, hi);
        p.sample_starts[row] = ceil_div_int(lo, p.sample_stride);
        p.sample_ends[row] = ceil_div_int(hi, p.sample_stride);
    }
}

template <int kBlock>
__device__ __forceinline__ void threshold_row(const TopkFusedParams& p, int row, RadixState& s) {
    int lo, hi;
    clamp_window(p.cu_starts, p.cu_ends, row, p.seq_len_kv, lo, hi);
    const int window = hi - lo;
    const int sample_lo = p.sample_starts[row], sample_hi = p.sample_ends[row];
    const int sample_window = sample_hi - sample_lo;
    float threshold = __int_as_float(0xff800000);  // -inf: keep the whole window
    if (window > p.capacity && sample_window > 0) {
        const double wanted = static_cast<double>(p.oversample) * p.k * sample_window / window;
        const int rank = max(1, static_cast<int>(ceil(wanted)));
        if (rank <= sample_window) {
            // Two digits place the rank-th key in a bin 2^-13 of its value wide; the bottom of the bin
            // is threshold enough. A third digit only where that bottom is no number (keys by -inf).
            const float* sample = p.sample_logits + row * p.sample_logits_stride + sample_lo;
            const auto key_at = [sample](int i, unsigned& key) {
                key = orderable_key(sample[i]);
                return true;
            };
            RadixProgress progress = radix_start(rank);
            radix_pass<kBlock>(sample_window, key_at, 0, progress, s);
            radix_pass<kBlock>(sample_window, key_at, 1, progress, s);
            const float bottom = logit_of_key(progress.prefix);
            if (bottom != bottom) radix_pass<kBlock>(sample_window, key_at, 2, progress, s);
            threshold = logit_of_key(progress.prefix);
        }
    }
    if (threadIdx.x == 0) {
        p.thresholds[row] = threshold;
        p.counts[row] = threshold == __int_as_float(0xff800000) ? window : 0;
    }
    __syncthreads();
}

// NOTES (H100, 2026-12-05): the candidates are copied to shared memory first (40 KiB a row at
// k = 2048, three 512-thread blocks to an SM). Smaller blocks with more rows in flight measured
// slower: 128 threads reading the buffer in place in every pass took 1.13-1.46x this kernel's time,
// and 128 threads holding the candidates in registers (111 registers, four blocks to an SM)
// 1.13-1.37x. ncu: this kernel is issue-bound (73% of issue slots busy), not short of rows in flight.
template <int kBlock>
__device__ __forceinline__ void candidates_row(const TopkFusedParams& p, int row, const GatherSlots& slots,
                                               const CandidateArea& a, RadixState& s, int* slot_counter) {
    int lo, hi;
    clamp_window(p.cu_starts, p.cu_ends, row, p.seq_len_kv, lo, hi);
    const int need = min(p.k, hi - lo);
    const int count = p.counts[row];
    bool failed = count > p.capacity || count < need;
    unsigned smallest = 0xffffffffu, largest = 0u;
    if (!failed) {
        const long long base = static_cast<long long>(row) * p.capacity;
        const float threshold = p.thresholds[row];
        const unsigned threshold_key = orderable_key(threshold);
        int at_or_above = 0;
        // NOTES: the loads of four slots are issued before their stores to shared memory: with a
        // store between them (which may alias, for all the compiler knows) each waits on the last.
        constexpr int kUnroll = 4;
        for (int first = threadIdx.x; first < count; first += kUnroll * kBlock) {
            float value[kUnroll];
            int key[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int i = first + u * kBlock;
                value[u] = i < count ? p.candidate_values[base + i] : 0.f;
                key[u] = i < count ? p.candidate_keys[base + i] : 0;
            }
            // NOTES: without branches (only the shared stores are predicated): a block per item
            // made a divergent region of each (H100 SASS, 2026-12-05: 27 instructions an item).
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int i = first + u * kBlock;
                const bool present = i < count;
                const unsigned ordered = orderable_key(value[u]);
                if (present) {
                    slots.ordered[i] = ordered;
                    slots.keys[i] = key[u];
                }
                at_or_above += (present & (ordered >= threshold_key)) ? 1 : 0;
                smallest = present && ordered < smallest ? ordered : smallest;
                largest = present && ordered > largest ? ordered : largest;
            }
        }
        // NOTES: the kernel keeps NaN whatever the threshold, and a NaN with its sign bit set orders
        // below -inf: only candidates at or above the threshold in key order prove that the window
        // has `need` keys there. A threshold of -inf kept the whole window, which proves it anyway.
        int total;
        block_exclusive_scan<kBlock>(at_or_above, s.warp_sums, total);
        block_min_max<kBlock>(smallest, largest, reinterpret_cast<unsigned*>(s.histogram));
        failed = threshold != __int_as_float(0xff800000) && total < need;
    }
    if (threadIdx.x == 0) {
        p.failed[row] = failed ? 1 : 0;
        p.fallback_starts[row] = failed ? p.cu_starts[row] : 0;
        p.fallback_ends[row] = failed ? p.cu_ends[row] : 0;
    }
    if (failed) return;  // the unfused path writes this row
    int* indices = p.indices + row * p.indices_stride;
    float* values = p.values != nullptr ? p.values + row * p.values_stride : nullptr;
    write_top<kBlock>(a, count, need, smallest, largest, lo, hi, p.sort_by_logit != 0, indices, values, s,
                      slot_counter);
    fill_empty_slots<kBlock>(indices, values, need, p.k);
    __syncthreads();  // the shared state is free for the next row
}

}  // namespace mqa_topk

// The thresholds: one block of MQA_TOPK_THRESHOLDS_THREADS per row at a time (a row's sample is
// about a thousand keys: small blocks keep more rows in flight). The candidate select: one block of
// kThreads per row, the candidates and the ranking in dynamic shared memory
// (MQA_TOPK_CANDIDATES_SHARED_BYTES).
#define MQA_TOPK_FUSED_KERNELS(sample_name, thresholds_name, candidates_name)                                   \
    extern "C" __global__ void __launch_bounds__(256) sample_name(const TopkFusedParams p) {                    \
        mqa_pdl::grid_dependency_wait();                                                                        \
        mqa_topk::sample_kv(p);                                                                                 \
    }                                                                                                           \
    extern "C" __global__ void __launch_bounds__(MQA_TOPK_THRESHOLDS_THREADS, MQA_TOPK_THRESHOLDS_MIN_BLOCKS)   \
        thresholds_name(const TopkFusedParams p) {                                                              \
        __shared__ mqa_topk::RadixState shared;                                                                 \
        mqa_pdl::grid_dependency_wait();                                                                        \
        for (int row = blockIdx.x; row < p.rows; row += gridDim.x)                                              \
            mqa_topk::threshold_row<MQA_TOPK_THRESHOLDS_THREADS>(p, row, shared);                               \
    }                                                                                                           \
    extern "C" __global__ void __launch_bounds__(mqa_topk::kThreads, 3) candidates_name(const TopkFusedParams p) { \
        __shared__ mqa_topk::RadixState shared;                                                                 \
        __shared__ int slot_counter;                                                                            \
        extern __shared__ __align__(16) unsigned char raw[];                                                    \
        const mqa_topk::GatherSlots slots = mqa_topk::gather_slots(raw, p.k, p.capacity);                       \
        const mqa_topk::CandidateArea area = mqa_topk::ranking_area(raw, slots.ordered, slots.keys);             \
        mqa_pdl::grid_dependency_wait();                                                                        \
        for (int row = blockIdx.x; row < p.rows; row += gridDim.x)                                              \
            mqa_topk::candidates_row<mqa_topk::kThreads>(p, row, slots, area, shared, &slot_counter);            \
    }
