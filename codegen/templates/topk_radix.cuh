#pragma once
// The block-level pieces of mqa_topk's selects (topk_select.cuh, topk_candidates.cuh): logits as
// orderable keys, a block scan, the radix select over 11 + 11 + 10 bit digits, the sort of a
// selection by logit and the empty slots of short windows. One block works on one row: kThreads
// threads in the unfused select, fewer in the fused path's kernels (kBlock, the template argument of
// every block-level helper, is the block's size).
// NaN logits (only from NaN or infinite inputs) order as their bits do: positive NaN above +inf.

#include "topk_select_params.cuh"

namespace mqa_topk {

constexpr int kThreads = MQA_TOPK_THREADS;
constexpr int kWarps = kThreads / 32;  // the largest block's warps (RadixState::warp_sums)
constexpr int kBins = 2048;  // the widest radix digit, 11 bits
constexpr unsigned kFullMask = 0xffffffffu;

// A block size the helpers take: whole warps, at most kThreads, an equal share of the bins each.
template <int kBlock>
constexpr bool kValidBlock = kBlock % 32 == 0 && kBlock <= kThreads && kBins % kBlock == 0;

__device__ __forceinline__ unsigned orderable_key(float value) {
    unsigned bits = __float_as_uint(value);
    if (bits == 0x80000000u) bits = 0;  // -0.0 == +0.0: one key, so the index decides between them
    // Negative: every bit flipped; otherwise the sign bit set (an arithmetic shift and one LOP3).
    return bits ^ (static_cast<unsigned>(static_cast<int>(bits) >> 31) | 0x80000000u);
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
    int found_count;
    int discard[32];  // a histogram pass's atomics for items it does not count, one word per lane
};

// Exclusive prefix sum of one value per thread over the block, and the block's total. Every thread
// of the block must call it.
template <int kBlock = kThreads>
__device__ __forceinline__ int block_exclusive_scan(int value, int* warp_sums, int& total) {
    static_assert(kValidBlock<kBlock>, "a block of whole warps, at most kThreads");
    constexpr int kBlockWarps = kBlock / 32;
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
        int sum = lane < kBlockWarps ? warp_sums[lane] : 0;
#pragma unroll
        for (int offset = 1; offset < 32; offset <<= 1) {
            const int before = __shfl_up_sync(kFullMask, sum, offset);
            if (lane >= offset) sum += before;
        }
        if (lane < kBlockWarps) warp_sums[lane] = sum;
    }
    __syncthreads();
    const int result = (warp > 0 ? warp_sums[warp - 1] : 0) + inclusive - value;
    total = warp_sums[kBlockWarps - 1];
    __syncthreads();  // warp_sums is free again
    return result;
}

// The smallest and the largest of one value per thread over the block; scratch holds 2 x kWarps.
// Every thread of the block must call it.
template <int kBlock = kThreads>
__device__ __forceinline__ void block_min_max(unsigned& smallest, unsigned& largest, unsigned* scratch) {
    static_assert(kValidBlock<kBlock>, "a block of whole warps, at most kThreads");
    constexpr int kBlockWarps = kBlock / 32;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        const unsigned other_smallest = __shfl_sync(kFullMask, smallest, lane ^ offset);
        const unsigned other_largest = __shfl_sync(kFullMask, largest, lane ^ offset);
        smallest = other_smallest < smallest ? other_smallest : smallest;
        largest = other_largest > largest ? other_largest : largest;
    }
    if (lane == 0) {
        scratch[warp] = smallest;
        scratch[kWarps + warp] = largest;
    }
    __syncthreads();
    for (int w = 0; w < kBlockWarps; ++w) {
        smallest = scratch[w] < smallest ? scratch[w] : smallest;
        largest = scratch[kWarps + w] > largest ? scratch[kWarps + w] : largest;
    }
    __syncthreads();  // scratch is free again
}

// Where a radix select stands after some digits: the keys matching `prefix` under `prefix_mask`
// hold the k-th largest; `remaining` of the k are still to take among them (the others lie above),
// and `in_prefix` keys match it.
struct RadixProgress {
    unsigned prefix;
    unsigned prefix_mask;
    int remaining;
    int in_prefix;
};

__device__ __forceinline__ RadixProgress radix_start(int k) { return RadixProgress{0u, 0u, k, 0}; }

// Keys at or above the prefix: those above it and those matching it.
__device__ __forceinline__ int radix_at_or_above(const RadixProgress& progress, int k) {
    return k - progress.remaining + progress.in_prefix;
}

// One digit of a radix select over items [0, count): bits [shift, shift + bits) of the keys
// (bits <= 11) narrow `progress` to the bin holding its remaining-th largest key. key_at(i, key)
// sets item i's key and says whether the item is present. Every thread of the block must call it.
template <int kBlock = kThreads, class KeyAt>
__device__ __forceinline__ void radix_digit(int count, const KeyAt& key_at, int shift, int bits,
                                            RadixProgress& progress, RadixState& s) {
    static_assert(kValidBlock<kBlock>, "a block of whole warps, at most kThreads");
    constexpr int kBinsPerThread = kBins / kBlock;
    const unsigned digit_mask = (1u << bits) - 1u;
    const unsigned prefix = progress.prefix, prefix_mask = progress.prefix_mask;
    const int lane = static_cast<int>(threadIdx.x % 32);
    for (int i = threadIdx.x; i < kBins; i += kBlock) s.histogram[i] = 0;
    __syncthreads();
    // NOTES: eight independent loads in flight per thread before their atomics; a lone load per
    // iteration leaves the pass waiting on memory latency.
    constexpr int kUnroll = 8;
    for (int base = threadIdx.x; base < count; base += kUnroll * kBlock) {
        int bins[kUnroll];  // the item's bin, or -1 when it is absent or outside the prefix
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const int i = base + u * kBlock;
            unsigned key = 0;
            const bool counted = i < count && key_at(i, key) && (key & prefix_mask) == prefix;
            bins[u] = counted ? static_cast<int>((key >> shift) & digit_mask) : -1;
        }
        // NOTES: every item takes an atomic, adding 0 to its lane's discard word when it is not
        // counted. A conditional atomic made a divergent region of each item (BSSY/BSYNC pairs, the
        // conditions kept as bytes in PRMTs): about 19 instructions an item over the candidates.
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
            atomicAdd(bins[u] >= 0 ? &s.histogram[bins[u]] : &s.discard[lane], bins[u] >= 0 ? 1 : 0);
    }
    __syncthreads();
    // Bins from the top: thread t owns kBinsPerThread of them from kBins-1-kBinsPerThread*t down.
    int counts[kBinsPerThread], owned = 0;
#pragma unroll
    for (int q = 0; q < kBinsPerThread; ++q) {
        counts[q] = s.histogram[kBins - 1 - (kBinsPerThread * threadIdx.x + q)];
        owned += counts[q];
    }
    int total;
    int above = block_exclusive_scan<kBlock>(owned, s.warp_sums, total);
#pragma unroll
    for (int q = 0; q < kBinsPerThread; ++q) {
        if (above < progress.remaining && above + counts[q] >= progress.remaining) {
            s.found_bin = kBins - 1 - (kBinsPerThread * threadIdx.x + q);
            s.found_above = above;
            s.found_count = counts[q];
        }
        above += counts[q];
    }
    __syncthreads();
    progress.remaining -= s.found_above;
    progress.prefix |= static_cast<unsigned>(s.found_bin) << shift;
    progress.prefix_mask |= digit_mask << shift;
    progress.in_prefix = s.found_count;
    __syncthreads();  // found_* are read before the next pass may write them
}

// Digit `pass` (0, 1, 2: bits 31-21, 20-10, 9-0) of a radix select over whole 32-bit keys.
template <int kBlock = kThreads, class KeyAt>
__device__ __forceinline__ void radix_pass(int count, const KeyAt& key_at, int pass, RadixProgress& progress,
                                           RadixState& s) {
    radix_digit<kBlock>(count, key_at, pass == 0 ? 21 : pass == 1 ? 10 : 0, pass == 2 ? 10 : 11, progress, s);
}

// Radix select over items [0, count): the k-th largest key among the present ones, and how many keys
// equal to it the top k holds.
template <int kBlock = kThreads, class KeyAt>
__device__ __forceinline__ void radix_select(int count, const KeyAt& key_at, int k, RadixState& s,
                                             unsigned& threshold, int& take_equal) {
    RadixProgress progress = radix_start(k);
#pragma unroll 1
    for (int pass = 0; pass < 3; ++pass) radix_pass<kBlock>(count, key_at, pass, progress, s);
    threshold = progress.prefix;
    take_equal = progress.remaining;
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
template <int kBlock = kThreads>
__device__ __forceinline__ void sort_selection(unsigned long long* selection, int count) {
    int padded = 1;
    while (padded < count) padded <<= 1;
    for (int i = count + threadIdx.x; i < padded; i += kBlock) selection[i] = 0;  // below every entry
    for (int size = 2; size <= padded; size <<= 1) {
        for (int stride = size / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            for (int i = threadIdx.x; i < padded; i += kBlock) {
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
template <int kBlock = kThreads>
__device__ __forceinline__ void fill_empty_slots(int* indices, float* values, int count, int k) {
    for (int t = count + threadIdx.x; t < k; t += kBlock) {
        indices[t] = -1;
        if (values != nullptr) values[t] = __int_as_float(0xff800000);  // -inf
    }
}

}  // namespace mqa_topk
