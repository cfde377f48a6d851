#pragma once
// A row's candidates gathered in shared memory (logits and their key columns, in no order) and the
// exact top k of them: which to take (radix select, then among equal logits at the k-th place the
// smaller keys) and the output in key order (a bitmap of the window gives each key its rank) or by
// logit. Used by mqa_topk_candidates (the fused path's buffer, copied there) and mqa_topk_select (a
// window's keys at or above a radix prefix). Both gather into GatherSlots past the ranking's area.

#include "topk_radix.cuh"

namespace mqa_topk {

constexpr int kRankWords = MQA_TOPK_RANK_SEGMENT / 32;
static_assert(kRankWords % kThreads == 0, "each thread scans whole words of the rank bitmap");
static_assert(MQA_TOPK_MAX_K == 4096 && MQA_TOPK_SELECTION_BYTES(2048) == 8 * kRankWords &&
                  MQA_TOPK_SELECTION_BYTES(4096) == 8 * MQA_TOPK_MAX_K,
              "the selection area holds the padded sort of k entries, or the bitmap and its prefixes");

// A row's candidates and the shared memory of their ranking: the bitmap and its word prefixes for
// the key-order output, or the selection for the sort.
struct CandidateArea {
    const unsigned* ordered;           // orderable_key() of each candidate's logit
    const int* keys;
    unsigned* bitmap;                  // [kRankWords]
    int* word_prefix;                  // [kRankWords]
    unsigned long long* selection;     // [MQA_TOPK_MAX_K], over bitmap and word_prefix
};

// The ranking's shared memory at the start of raw, and where the candidates lie.
__device__ __forceinline__ CandidateArea ranking_area(unsigned char* raw, const unsigned* ordered, const int* keys) {
    CandidateArea a;
    a.selection = reinterpret_cast<unsigned long long*>(raw);
    a.bitmap = reinterpret_cast<unsigned*>(raw);
    a.word_prefix = reinterpret_cast<int*>(raw) + kRankWords;
    a.ordered = ordered;
    a.keys = keys;
    return a;
}

// Where the unfused select gathers a row's candidates: past the ranking in the same shared memory.
// NOTES: the logits are kept as their orderable keys, so that no pass recomputes them (the fused
// select is issue-bound: H100, 2026-12-05).
struct GatherSlots {
    unsigned* ordered;  // [capacity]: orderable_key() of the logit
    int* keys;          // [capacity]
};

// NOTES: sized by k, not MQA_TOPK_MAX_K: 16 KiB less at k <= 2048 lets more blocks share an SM.
__device__ __forceinline__ GatherSlots gather_slots(unsigned char* raw, int k, int capacity) {
    unsigned* ordered = reinterpret_cast<unsigned*>(raw + MQA_TOPK_SELECTION_BYTES(k));
    return GatherSlots{ordered, reinterpret_cast<int*>(ordered + capacity)};
}

struct Selected {
    unsigned threshold;       // keys above it are taken
    unsigned index_cut;       // of the keys equal to it, those whose ~index is at or above this
    bool all;                 // every candidate is taken

    // Without branches: the passes that ask take a candidate's two words either way.
    __device__ __forceinline__ bool takes(unsigned ordered, int key) const {
        return all | (ordered > threshold) | ((ordered == threshold) & (~static_cast<unsigned>(key) >= index_cut));
    }
    __device__ __forceinline__ bool operator()(const CandidateArea& a, int i) const {
        return takes(a.ordered[i], a.keys[i]);
    }
};

// The smallest and the largest key of the candidates, over the block.
template <int kBlock>
__device__ __forceinline__ void candidate_key_range(const CandidateArea& a, int count, RadixState& s,
                                                    unsigned& smallest, unsigned& largest) {
    smallest = 0xffffffffu;
    largest = 0u;
    for (int i = threadIdx.x; i < count; i += kBlock) {
        const unsigned key = a.ordered[i];
        smallest = key < smallest ? key : smallest;
        largest = key > largest ? key : largest;
    }
    block_min_max<kBlock>(smallest, largest, reinterpret_cast<unsigned*>(s.histogram));
}

// Which candidates make the top k (need of them; count > need), given their smallest and largest
// key. The digits run over each key's offset from the smallest, from the highest bit of the
// largest offset down, and stop as soon as the bin holding the k-th largest key is taken whole.
// NOTES: digits of the keys themselves put a row's candidates (logits within a few binades) in a
// handful of the first digit's bins, whose shared atomics then serialize, and always took three
// digits and a count of the keys equal to the k-th.
template <int kBlock>
__device__ __forceinline__ Selected select_candidates(const CandidateArea& a, int count, int need, unsigned smallest,
                                                      unsigned largest, RadixState& s) {
    const auto offset_at = [&a, smallest](int i, unsigned& offset) {
        offset = a.ordered[i] - smallest;
        return true;
    };
    RadixProgress progress = radix_start(need);
    progress.in_prefix = count;  // every key matches the empty prefix
    const unsigned span = largest - smallest;
    int open_bits = span == 0u ? 0 : 32 - __clz(static_cast<int>(span));
    while (open_bits > 0 && progress.in_prefix > progress.remaining) {
        const int bits = open_bits < 11 ? open_bits : 11;
        open_bits -= bits;
        radix_digit<kBlock>(count, offset_at, open_bits, bits, progress, s);
    }
    // Keys at or above the prefix (its open bits 0) are those above the bin and the bin's own.
    Selected chosen{smallest + progress.prefix, 0u, false};
    if (open_bits > 0) return chosen;  // the bin is taken whole: so is every key equal to the threshold
    // Every bit decided: the in_prefix keys matching the prefix equal the k-th largest, and the top k
    // holds `remaining` of them: the smallest key indices (the largest ~index).
    if (progress.in_prefix > progress.remaining) {
        const unsigned threshold = chosen.threshold;
        int unused;
        radix_select<kBlock>(
            count,
            [&a, threshold](int i, unsigned& key) {
                key = ~static_cast<unsigned>(a.keys[i]);
                return a.ordered[i] == threshold;
            },
            progress.remaining, s, chosen.index_cut, unused);
    }
    return chosen;
}

// Writes the selection in key order: a candidate's rank is the number of selected keys below it.
// Only the bitmap's words that cover the window are cleared and scanned. Without values the keys are
// read back from the bitmap itself (each thread walks the set bits of its words); with values, a
// second pass over the candidates places each one at its rank.
template <int kBlock>
__device__ __forceinline__ void write_in_key_order(const CandidateArea& a, int count, const Selected& selected, int lo,
                                                   int hi, int* indices, float* values, RadixState& s) {
    constexpr int kWordsPerThread = kRankWords / kBlock;
    static_assert(kRankWords % kBlock == 0, "each thread scans whole words of the rank bitmap");
    const int lane = static_cast<int>(threadIdx.x % 32);
    int written = 0;
    for (int segment = lo; segment < hi; segment += MQA_TOPK_RANK_SEGMENT) {
        const int used_words = (min(hi - segment, MQA_TOPK_RANK_SEGMENT) + 31) / 32;
        for (int w = threadIdx.x; w < used_words; w += kBlock) a.bitmap[w] = 0;
        __syncthreads();
        // NOTES: every candidate takes an atomic (an OR of 0 into its lane's discard word when it
        // is not set here), as in radix_digit: a conditional one made a divergent region of each.
        for (int i = threadIdx.x; i < count; i += kBlock) {
            const int key = a.keys[i];
            const int offset = key - segment;
            const bool set = (static_cast<unsigned>(offset) < MQA_TOPK_RANK_SEGMENT) & selected.takes(a.ordered[i], key);
            atomicOr(set ? a.bitmap + offset / 32 : reinterpret_cast<unsigned*>(s.discard) + lane,
                     set ? 1u << (offset % 32) : 0u);
        }
        __syncthreads();
        unsigned words[kWordsPerThread];
        int owned = 0;
#pragma unroll
        for (int q = 0; q < kWordsPerThread; ++q) {
            const int w = kWordsPerThread * threadIdx.x + q;
            words[q] = w < used_words ? a.bitmap[w] : 0u;
            owned += __popc(words[q]);
        }
        int total;
        int before = block_exclusive_scan<kBlock>(owned, s.warp_sums, total);
        if (values == nullptr) {
            int rank = written + before;
#pragma unroll
            for (int q = 0; q < kWordsPerThread; ++q) {
                const int first_key = segment + 32 * (kWordsPerThread * static_cast<int>(threadIdx.x) + q);
                for (unsigned bits = words[q]; bits != 0u; bits &= bits - 1u) indices[rank++] = first_key + __ffs(bits) - 1;
            }
        } else {
#pragma unroll
            for (int q = 0; q < kWordsPerThread; ++q) {
                const int w = kWordsPerThread * threadIdx.x + q;
                if (w < used_words) a.word_prefix[w] = before;
                before += __popc(words[q]);
            }
            __syncthreads();
            for (int i = threadIdx.x; i < count; i += kBlock) {
                const int offset = a.keys[i] - segment;
                if (offset >= 0 && offset < MQA_TOPK_RANK_SEGMENT && selected(a, i)) {
                    const int word = offset / 32;
                    const int rank =
                        written + a.word_prefix[word] + __popc(a.bitmap[word] & ((1u << (offset % 32)) - 1u));
                    indices[rank] = a.keys[i];
                    values[rank] = logit_of_key(a.ordered[i]);
                }
            }
        }
        written += total;
        __syncthreads();  // the bitmap is free for the next segment
    }
}

// Appends (key, orderable_key(value)) to the slots when `keep`, at a slot counted by `counter` (shared memory):
// one atomicAdd per warp. Every lane of the warp calls it.
__device__ __forceinline__ void append_candidate(const GatherSlots& slots, int* counter, int capacity, bool keep,
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
        slots.ordered[slot] = orderable_key(value);
        slots.keys[slot] = key;
    }
}

// Writes the top `need` of the area's `count` candidates (need <= count) of window [lo, hi) to
// indices and values (or null): in key order, or with `sort` by logit. `smallest` and `largest`
// bound the candidates' keys (candidate_key_range). The empty slots are the caller's.
template <int kBlock>
__device__ __forceinline__ void write_top(const CandidateArea& a, int count, int need, unsigned smallest,
                                          unsigned largest, int lo, int hi, bool sort, int* indices, float* values,
                                          RadixState& s, int* slot_counter) {
    Selected selected{0u, 0u, true};
    if (count > need) selected = select_candidates<kBlock>(a, count, need, smallest, largest, s);
    if (sort) {
        if (threadIdx.x == 0) *slot_counter = 0;
        __syncthreads();
        for (int i = threadIdx.x; i < count; i += kBlock) {
            if (selected(a, i))
                a.selection[atomicAdd(slot_counter, 1)] = selection_entry(a.ordered[i], a.keys[i]);
        }
        sort_selection<kBlock>(a.selection, need);
        for (int t = threadIdx.x; t < need; t += kBlock) {
            const unsigned long long entry = a.selection[t];
            indices[t] = static_cast<int>(0xffffffffu - static_cast<unsigned>(entry));
            if (values != nullptr) values[t] = logit_of_key(static_cast<unsigned>(entry >> 32));
        }
    } else {
        write_in_key_order<kBlock>(a, count, selected, lo, hi, indices, values, s);
    }
}

}  // namespace mqa_topk
