#pragma once
// A row's candidates gathered in shared memory (logits and their key columns, in no order) and the
// exact top k of them: which to take (radix select, then among equal logits at the k-th place the
// smaller keys) and the output in key order (a bitmap of the window gives each key its rank) or by
// logit. Used by mqa_topk_candidates (the fused path's buffer) and mqa_topk_select (a window's keys
// at or above a radix prefix).

#include "topk_radix.cuh"

namespace mqa_topk {

constexpr int kRankWords = MQA_TOPK_RANK_SEGMENT / 32;
static_assert(kRankWords == 4 * kThreads, "each thread scans four words of the rank bitmap");
static_assert(MQA_TOPK_MAX_K == 4096 && MQA_TOPK_SELECTION_BYTES(2048) == 8 * kRankWords &&
                  MQA_TOPK_SELECTION_BYTES(4096) == 8 * MQA_TOPK_MAX_K,
              "the selection area holds the padded sort of k entries, or the bitmap and its prefixes");

// The shared memory of a row's candidates: the bitmap and its word prefixes for the key-order
// ranking, or the selection for the sort, then the candidates.
struct CandidateArea {
    float* values;
    int* keys;
    unsigned* bitmap;                  // [kRankWords]
    int* word_prefix;                  // [kRankWords]
    unsigned long long* selection;     // [MQA_TOPK_MAX_K], over bitmap and word_prefix
};

// NOTES: sized by k, not MQA_TOPK_MAX_K: 16 KiB less at k <= 2048 lets three blocks share an SM
// instead of two.
__device__ __forceinline__ CandidateArea carve_candidates(unsigned char* raw, int k, int capacity) {
    CandidateArea a;
    a.selection = reinterpret_cast<unsigned long long*>(raw);
    a.bitmap = reinterpret_cast<unsigned*>(raw);
    a.word_prefix = reinterpret_cast<int*>(raw) + kRankWords;
    a.values = reinterpret_cast<float*>(raw + MQA_TOPK_SELECTION_BYTES(k));
    a.keys = reinterpret_cast<int*>(a.values + capacity);
    return a;
}

struct Selected {
    unsigned threshold;       // keys above it are taken
    unsigned index_cut;       // of the keys equal to it, those whose ~index is at or above this
    bool all;                 // every candidate is taken

    __device__ __forceinline__ bool operator()(const CandidateArea& a, int i) const {
        if (all) return true;
        const unsigned key = orderable_key(a.values[i]);
        return key > threshold || (key == threshold && ~static_cast<unsigned>(a.keys[i]) >= index_cut);
    }
};

// Which candidates make the top k (need of them; count > need). The digits run over each key's
// offset from the smallest candidate, from the highest bit of the largest offset down, and stop as
// soon as the bin holding the k-th largest key is taken whole. NOTES: digits of the keys themselves
// put a row's candidates (logits within a few binades) in a handful of the first digit's bins, whose
// shared atomics then serialize, and always took three digits and a count of the keys equal to the
// k-th.
__device__ __forceinline__ Selected select_candidates(const CandidateArea& a, int count, int need, RadixState& s) {
    unsigned* scratch = reinterpret_cast<unsigned*>(s.histogram);
    unsigned smallest = 0xffffffffu, largest = 0u;
    for (int i = threadIdx.x; i < count; i += kThreads) {
        const unsigned key = orderable_key(a.values[i]);
        smallest = key < smallest ? key : smallest;
        largest = key > largest ? key : largest;
    }
    block_min_max(smallest, largest, scratch);
    const auto offset_at = [&a, smallest](int i, unsigned& offset) {
        offset = orderable_key(a.values[i]) - smallest;
        return true;
    };
    RadixProgress progress = radix_start(need);
    progress.in_prefix = count;  // every key matches the empty prefix
    const unsigned span = largest - smallest;
    int open_bits = span == 0u ? 0 : 32 - __clz(static_cast<int>(span));
    while (open_bits > 0 && progress.in_prefix > progress.remaining) {
        const int bits = open_bits < 11 ? open_bits : 11;
        open_bits -= bits;
        radix_digit(count, offset_at, open_bits, bits, progress, s);
    }
    // Keys at or above the prefix (its open bits 0) are those above the bin and the bin's own.
    Selected chosen{smallest + progress.prefix, 0u, false};
    if (open_bits > 0) return chosen;  // the bin is taken whole: so is every key equal to the threshold
    // Every bit decided: the in_prefix keys matching the prefix equal the k-th largest, and the top k
    // holds `remaining` of them: the smallest key indices (the largest ~index).
    if (progress.in_prefix > progress.remaining) {
        const unsigned threshold = chosen.threshold;
        int unused;
        radix_select(
            count,
            [&a, threshold](int i, unsigned& key) {
                key = ~static_cast<unsigned>(a.keys[i]);
                return orderable_key(a.values[i]) == threshold;
            },
            progress.remaining, s, chosen.index_cut, unused);
    }
    return chosen;
}

// Writes the selection in key order: a candidate's rank is the number of selected keys below it.
__device__ __forceinline__ void write_in_key_order(const CandidateArea& a, int count, const Selected& selected, int lo,
                                                   int hi, int* indices, float* values, RadixState& s) {
    int written = 0;
    for (int segment = lo; segment < hi; segment += MQA_TOPK_RANK_SEGMENT) {
        for (int w = threadIdx.x; w < kRankWords; w += kThreads) a.bitmap[w] = 0;
        __syncthreads();
        for (int i = threadIdx.x; i < count; i += kThreads) {
            const int offset = a.keys[i] - segment;
            if (offset >= 0 && offset < MQA_TOPK_RANK_SEGMENT && selected(a, i))
                atomicOr(a.bitmap + offset / 32, 1u << (offset % 32));
        }
        __syncthreads();
        unsigned words[4];
        int owned = 0;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            words[q] = a.bitmap[4 * threadIdx.x + q];
            owned += __popc(words[q]);
        }
        int total;
        int before = block_exclusive_scan(owned, s.warp_sums, total);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            a.word_prefix[4 * threadIdx.x + q] = before;
            before += __popc(words[q]);
        }
        __syncthreads();
        for (int i = threadIdx.x; i < count; i += kThreads) {
            const int offset = a.keys[i] - segment;
            if (offset >= 0 && offset < MQA_TOPK_RANK_SEGMENT && selected(a, i)) {
                const int word = offset / 32;
                const int rank =
                    written + a.word_prefix[word] + __popc(a.bitmap[word] & ((1u << (offset % 32)) - 1u));
                indices[rank] = a.keys[i];
                if (values != nullptr) values[rank] = logit_of_key(orderable_key(a.values[i]));
            }
        }
        written += total;
        __syncthreads();  // the bitmap is free for the next segment
    }
}

// Appends (key, value) to the area when `keep`, at a slot counted by `counter` (shared memory):
// one atomicAdd per warp. Every lane of the warp calls it.
__device__ __forceinline__ void append_candidate(const CandidateArea& a, int* counter, int capacity, bool keep,
                                                 int key, float value) {
    const unsigned keeping = __ballot_sync(kFullMask, keep);
    if (keeping == 0u) return;
    const int lane = static_cast<int>(threadIdx.x % 32);
    const int leader = __ffs(keeping) - 1;
    int first = 0;
    if (lane == leader) first = atomicAdd(counter, __popc(keeping));
    first = __shfl_sync(kFullMask, first, leader);
    const int slot = first + __popc(keeping & ((1u << lane) - 1u));
    if (keep && slot < capacity) {
        a.values[slot] = value;
        a.keys[slot] = key;
    }
}

// Writes the top `need` of the area's `count` candidates (need <= count) of window [lo, hi) to
// indices and values (or null): in key order, or with `sort` by logit. The empty slots are the
// caller's.
__device__ __forceinline__ void write_top(const CandidateArea& a, int count, int need, int lo, int hi, bool sort,
                                          int* indices, float* values, RadixState& s, int* slot_counter) {
    Selected selected{0u, 0u, true};
    if (count > need) selected = select_candidates(a, count, need, s);
    if (sort) {
        if (threadIdx.x == 0) *slot_counter = 0;
        __syncthreads();
        for (int i = threadIdx.x; i < count; i += kThreads) {
            if (selected(a, i))
                a.selection[atomicAdd(slot_counter, 1)] = selection_entry(orderable_key(a.values[i]), a.keys[i]);
        }
        sort_selection(a.selection, need);
        for (int t = threadIdx.x; t < need; t += kThreads) {
            const unsigned long long entry = a.selection[t];
            indices[t] = static_cast<int>(0xffffffffu - static_cast<unsigned>(entry));
            if (values != nullptr) values[t] = logit_of_key(static_cast<unsigned>(entry >> 32));
        }
    } else {
        write_in_key_order(a, count, selected, lo, hi, indices, values, s);
    }
}

}  // namespace mqa_topk
