#pragma once
// Exact top-k of each row of a logits matrix, inside the row's window [cu_starts, cu_ends) (clamped
// to [0, N)). One block per row (a grid-stride loop past gridDim.x):
//  1. Logits map to unsigned keys that order as the floats do (-0.0 taken as +0.0).
//  2. Radix select over the keys, 11 + 11 + 10 bits: three histogram passes over the window find the
//     k-th largest key T and how many keys equal to T the selection takes.
//  3. One pass in index order takes every key above T and the first of those equal to T: so among
//     equal logits the smaller key index wins. The selection is written in key order, or with
//     sort_by_logit kept in shared memory for
//  4. a bitonic sort: logits descending, equal logits by index ascending.
// Slots past a window holding fewer than k keys get index -1 and logit -inf.
// NaN logits (only from NaN or infinite inputs) order as their bits do: positive NaN above +inf.

#include "topk_select_params.cuh"

namespace mqa_topk {

constexpr int kThreads = MQA_TOPK_THREADS;
constexpr int kWarps = kThreads / 32;
constexpr int kBins = 2048;  // the widest radix digit, 11 bits
constexpr unsigned kFullMask = 0xffffffffu;
static_assert(kBins == 4 * kThreads, "each thread owns four bins of the histogram scan");

__device__ __forceinline__ unsigned orderable_key(float value) {
    unsigned bits = __float_as_uint(value);
    if (bits == 0x80000000u) bits = 0;  // -0.0 == +0.0: one key, so the index decides between them
    return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

__device__ __forceinline__ float logit_of_key(unsigned key) {
    return __uint_as_float((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key);
}

// Sorting descending by this puts larger logits first and, among equal ones, smaller indices first.
__device__ __forceinline__ unsigned long long selection_entry(unsigned key, int index) {
    return (static_cast<unsigned long long>(key) << 32) | (0xffffffffu - static_cast<unsigned>(index));
}

// What a radix select and a block scan need.
struct RadixState {
    int histogram[kBins];
    int warp_sums[kWarps];
    int found_bin;
    int found_above;
};

struct SharedState {
    RadixState radix;
    unsigned long long selection[MQA_TOPK_MAX_K];
};

// Exclusive prefix sum of one value per thread over the block, and the block's total. Every thread
// of the block must call it.
__device__ __forceinline__ int block_exclusive_scan(int value, int* warp_sums, int& total) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int inclusive = value;
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        const int before = __shfl_up_sync(kFullMask, inclusive, offset);
        if (lane >= offset) inclusive += before;
    }
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        int sum = lane < kWarps ? warp_sums[lane] : 0;
#pragma unroll
        for (int offset = 1; offset < 32; offset <<= 1) {
            const int before = __shfl_up_sync(kFullMask, sum, offset);
            if (lane >= offset) sum += before;
        }
        if (lane < kWarps) warp_sums[lane] = sum;
    }
    __syncthreads();
    const int result = (warp > 0 ? warp_sums[warp - 1] : 0) + inclusive - value;
    total = warp_sums[kWarps - 1];
    __syncthreads();  // warp_sums is free again
    return result;
}

// Radix select over items [0, count): the k-th largest key among the present ones, and how many keys
// equal to it the top k holds. key_at(i, key) sets item i's key and says whether the item is present.
template <class KeyAt>
__device__ __forceinline__ void radix_select(int count, const KeyAt& key_at, int k, RadixState& s,
                                             unsigned& threshold, int& take_equal) {
    unsigned prefix = 0, prefix_mask = 0;
    int remaining = k;
#pragma unroll 1
    for (int pass = 0; pass < 3; ++pass) {
        const int shift = pass == 0 ? 21 : pass == 1 ? 10 : 0;
        const unsigned digit_mask = pass == 2 ? 0x3ffu : 0x7ffu;
        for (int i = threadIdx.x; i < kBins; i += kThreads) s.histogram[i] = 0;
        __syncthreads();
        // NOTES: eight independent loads in flight per thread before their atomics; a lone load per
        // iteration leaves the pass waiting on memory latency.
        constexpr int kUnroll = 8;
        for (int base = threadIdx.x; base < count; base += kUnroll * kThreads) {
            unsigned keys[kUnroll];
            bool present[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int i = base + u * kThreads;
                keys[u] = 0;
                present[u] = i < count && key_at(i, keys[u]);
            }
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                if (present[u] && (keys[u] & prefix_mask) == prefix)
                    atomicAdd(&s.histogram[(keys[u] >> shift) & digit_mask], 1);
            }
        }
        __syncthreads();
        // Bins from the top: thread t owns bins kBins-1-4t down to kBins-4-4t.
        int counts[4], owned = 0;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            counts[q] = s.histogram[kBins - 1 - (4 * threadIdx.x + q)];
            owned += counts[q];
        }
        int total;
        int above = block_exclusive_scan(owned, s.warp_sums, total);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            if (above < remaining && above + counts[q] >= remaining) {
                s.found_bin = kBins - 1 - (4 * threadIdx.x + q);
                s.found_above = above;
            }
            above += counts[q];
        }
        __syncthreads();
        remaining -= s.found_above;
        prefix |= static_cast<unsigned>(s.found_bin) << shift;
        prefix_mask |= digit_mask << shift;
        __syncthreads();  // found_* are read before the next pass may write them
    }
    threshold = prefix;
    take_equal = remaining;
}

// The k-th largest logit of logits[lo, hi) as a key, and how many equal to it the top k holds.
__device__ __forceinline__ void find_threshold(const float* logits, int lo, int hi, int k, RadixState& s,
                                               unsigned& threshold, int& take_equal) {
    const float* window = logits + lo;
    radix_select(
        hi - lo,
        [window](int i, unsigned& key) {
            key = orderable_key(window[i]);
            return true;
        },
        k, s, threshold, take_equal);
}

// Descending bitonic sort of selection[0, count); count <= MQA_TOPK_MAX_K.
__device__ __forceinline__ void sort_selection(unsigned long long* selection, int count) {
    int padded = 1;
    while (padded < count) padded <<= 1;
    for (int i = count + threadIdx.x; i < padded; i += kThreads) selection[i] = 0;  // below every entry
    for (int size = 2; size <= padded; size <<= 1) {
        for (int stride = size / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            for (int i = threadIdx.x; i < padded; i += kThreads) {
                const int partner = i ^ stride;
                if (partner <= i) continue;
                const bool descending = (i & size) == 0;
                const unsigned long long a = selection[i], b = selection[partner];
                if (descending ? a < b : a > b) {
                    selection[i] = b;
                    selection[partner] = a;
                }
            }
        }
    }
    __syncthreads();
}

// Slots [count, k) of a row hold no key: index -1, logit -inf.
__device__ __forceinline__ void fill_empty_slots(int* indices, float* values, int count, int k) {
    for (int t = count + threadIdx.x; t < k; t += kThreads) {
        indices[t] = -1;
        if (values != nullptr) values[t] = __int_as_float(0xff800000);  // -inf
    }
}

__device__ __forceinline__ void select_row(const TopkSelectParams& p, int row, SharedState& s) {
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
            s.selection[slot] = selection_entry(key, index);
        } else {
            indices[slot] = index;
            if (values != nullptr) values[slot] = logit_of_key(key);
        }
    };

    if (window <= k) {
        for (int j = lo + threadIdx.x; j < hi; j += kThreads) take(j - lo, orderable_key(logits[j]), j);
    } else {
        unsigned threshold;
        int take_equal;
        find_threshold(logits, lo, hi, k, s.radix, threshold, take_equal);
        // In key order: a key above the threshold goes after every taken key before it; a key equal
        // to it is taken while fewer than take_equal equal keys came before.
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
            const int before = block_exclusive_scan((above ? 1 : 0) | (equal ? 1 << 16 : 0), s.radix.warp_sums, total);
            const int above_before = above_so_far + (before & 0xffff);
            const int equal_before = equal_so_far + (before >> 16);
            if (above) take(above_before + min(equal_before, take_equal), key, j);
            if (equal && equal_before < take_equal) take(above_before + equal_before, key, j);
            above_so_far += total & 0xffff;
            equal_so_far += total >> 16;
        }
    }
    const int count = min(window, k);
    if (sort) {
        sort_selection(s.selection, count);
        for (int t = threadIdx.x; t < count; t += kThreads) {
            const unsigned long long entry = s.selection[t];
            indices[t] = static_cast<int>(0xffffffffu - static_cast<unsigned>(entry));
            if (values != nullptr) values[t] = logit_of_key(static_cast<unsigned>(entry >> 32));
        }
    }
    fill_empty_slots(indices, values, count, k);
    __syncthreads();  // the shared state is free for the next row
}

}  // namespace mqa_topk

#define MQA_TOPK_SELECT_KERNEL(name)                                                            \
    extern "C" __global__ void __launch_bounds__(mqa_topk::kThreads) name(const TopkSelectParams p) { \
        __shared__ mqa_topk::SharedState shared;                                                \
        for (int row = blockIdx.x; row < p.rows; row += gridDim.x) {                            \
            if (p.only_rows == nullptr || p.only_rows[row] != 0) mqa_topk::select_row(p, row, shared); \
        }                                                                                       \
    }
