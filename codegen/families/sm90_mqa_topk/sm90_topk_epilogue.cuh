#pragma once
// The mqa_topk family's epilogue for the sm90 kernel (sm90_epilogue.cuh's OwnedResults, third
// output): a logit is kept only when it lies inside its row's window and is not below the row's
// threshold; then it is appended, with its key column, to the row's candidate buffer. Nothing else
// is stored, so the [S, N] logits never reach memory. `!(value < threshold)` also keeps NaN, which
// the final select orders exactly.
//
// Each lane stages the logits it keeps, per row, in its own column of its warp's stage in shared
// memory (no warp vote per store), counted in registers. After a tile that may leave a lane too
// little room for the next, and at the unit's end, the warp moves its stages to their buffers: per
// row, the lanes holding it sum their counts with shuffles and one atomicAdd reserves the row's
// slots. A row whose threshold is -inf keeps its whole window: its key col goes to slot
// col - window start (the count was set to the window's size beforehand), with no atomic.
// NOTES (H200 and H100, 2026-12-05): an atomicAdd per kept logit made the twgmma kernel 2.1-4.3x its
// twin's time; one per warp and store (the lanes holding one row's results) 2.3x: the epilogue
// waited on each atomic's reply. A stage whose counts lived in shared memory, with two warp
// barriers per store and its move to the buffer inlined after every store, was slower still (5.6x
// at N = 8192). A stage per row shared by the warp (slots handed out by a ballot per store) took
// about 70 instructions a tile more than the twin's store at r8 (sm_90a SASS, 2026-12-05).

#include "sm90_epilogue.cuh"

// Tiles' worth of results a warp stages per row before it must move them (sm90_topk_stage_bytes()
// on the host sizes the same stage).
#define MQA_TOPK_STAGE_TILES 8

namespace mqa_sm90 {

// `if (keep) *at = entry;` as one predicated shared store: written as a branch, ptxas moves the
// slot's arithmetic under it and makes a divergent region of every store.
__device__ __forceinline__ void store_shared_if(bool keep, int2* at, int2 entry) {
#if defined(__CUDA_ARCH__)
    asm volatile(
        "{\n .reg .pred keep;\n setp.ne.b32 keep, %0, 0;\n @keep st.shared.v2.b32 [%1], {%2, %3};\n}"
        ::"r"(static_cast<int>(keep)), "r"(static_cast<unsigned>(__cvta_generic_to_shared(at))), "r"(entry.x),
        "r"(entry.y)
        : "memory");
#else
    if (keep) *at = entry;
#endif
}

template <int kRows, int kMathGroups, int kMTiles>
struct OwnedResults<kRows, Output::candidates, kMathGroups, kMTiles> {
    using R = QuadReduction<kRows>;
    static constexpr unsigned kFullMask = 0xffffffffu;
    static constexpr int kWarps = 4 * kMathGroups;
    // Results k and k + 1 share a row when there are four rows or more: one count per pair.
    static constexpr int kCounts = kRows >= 4 ? R::kHeld / 2 : 1;
    __device__ __forceinline__ static constexpr int count_of(int k) { return kRows >= 4 ? k / 2 : 0; }
    __device__ __forceinline__ static constexpr int first_of(int c) { return kRows >= 4 ? 2 * c : 0; }
    // A lane's results of one row in one tile, and its slots for them: MQA_TOPK_STAGE_TILES tiles'
    // worth, so a lane with one tile's room left takes the next tile whole. The stage lies in dynamic
    // shared memory past the twin's layout: kSharedBytes more than the twin's (sm90_topk_stage_bytes()
    // on the host; tests/test_topk_epilogue_logic.cpp holds the two equal). Entry i of count c of a
    // lane is word (c * kLaneSlots + i) * 32 + lane of its warp's stage: the lanes' stores of one
    // result never share a bank. NOTES (H100, 2026-12-05): four tiles instead of two made the
    // kernel 0.76-0.89x its time, eight instead of four 0.81-0.95x.
    static constexpr int kPerTile = kMTiles * (R::kHeld / kCounts);
    static constexpr int kLaneSlots = MQA_TOPK_STAGE_TILES * kPerTile;
    static constexpr unsigned kSharedBytes = kWarps * 32 * kCounts * kLaneSlots * 8;

    // Result k's window, clamped; empty for a result this lane does not keep (past seq_len, or a
    // lane whose copy another lane keeps), so the window test alone says whether to keep.
    int lower[R::kHeld];
    int upper[R::kHeld];
    int half[R::kHeld];
    float threshold[R::kHeld];
    mutable int staged[kCounts];  // this lane's staged logits of each of its rows
    int first_row;
    int2* stage;  // this lane's column of its warp's [kCounts][kLaneSlots][32] (key, value bits)

    // `shared`: kSharedBytes of shared memory, 8-byte aligned, for the block's math warps.
    __device__ __forceinline__ void load(const MqaLogitsParams& p, int unit_first_row, int quad_lane,
                                         unsigned char* shared) {
        const int lane = static_cast<int>(threadIdx.x % 32);
        const int warp = static_cast<int>(threadIdx.x / 32) - 4;  // warpgroup 0 produces
        stage = reinterpret_cast<int2*>(shared) + warp * 32 * kCounts * kLaneSlots + lane;
        first_row = unit_first_row;
#pragma unroll
        for (int c = 0; c < kCounts; ++c) staged[c] = 0;
#pragma unroll
        for (int k = 0; k < R::kHeld; ++k) {
            const int item = R::item(k, quad_lane);
            const int r = first_row + item / 2;
            half[k] = item % 2;
            const bool valid = R::stores(quad_lane) && r < p.seq_len;
            const int begin = valid ? p.cu_starts[r] : 0;
            const int end = valid ? p.cu_ends[r] : 0;
            lower[k] = begin < 0 ? 0 : begin;
            upper[k] = end > p.seq_len_kv ? p.seq_len_kv : end;
            threshold[k] = valid ? p.topk_thresholds[r] : 0.f;
        }
    }

    // Moves every lane's stage to its rows' candidate buffers. Every lane of the warp calls it. The
    // lanes holding a row are those of one quad lane (the eight group rows); two quad lanes may hold
    // halves of the same row (r <= 2), and then each reserves its own slots.
    __device__ __forceinline__ void flush(const MqaLogitsParams& p) const {
        const int lane = static_cast<int>(threadIdx.x % 32);
        const int quad_lane = lane % 4;
#pragma unroll
        for (int c = 0; c < kCounts; ++c) {
            const int k = first_of(c);
            const int count = staged[c];
            int inclusive = count;  // over the group rows of this quad lane
#pragma unroll
            for (int offset = 4; offset < 32; offset <<= 1) {
                const int below = __shfl_up_sync(kFullMask, inclusive, offset);
                if (lane >= offset) inclusive += below;
            }
            const int total = __shfl_sync(kFullMask, inclusive, 28 + quad_lane);
            const int row = first_row + R::item(k, quad_lane) / 2;
            const bool in_place = threshold[k] == -__int_as_float(0x7f800000);
            int first = 0;
            if (lane < 4 && total > 0 && !in_place) first = atomicAdd(p.topk_counts + row, total);
            first = __shfl_sync(kFullMask, first, quad_lane);
            first = in_place ? -lower[k] : first + inclusive - count;
            const long long row_base = static_cast<long long>(row) * p.topk_capacity;
            for (int i = 0; i < count; ++i) {
                const int2 entry = stage[(c * kLaneSlots + i) * 32];
                const int slot = first + (in_place ? entry.x : i);
                if (slot < p.topk_capacity) {
                    p.topk_keys[row_base + slot] = entry.x;
                    p.topk_values[row_base + slot] = __int_as_float(entry.y);
                }
            }
            staged[c] = 0;
        }
    }

    // Moves the stages on when some lane of the warp has more than `most` of a row staged.
    __device__ __forceinline__ void flush_past(const MqaLogitsParams& p, int most) const {
        bool past = false;
#pragma unroll
        for (int c = 0; c < kCounts; ++c) past = past || staged[c] > most;
        if (__any_sync(kFullMask, past)) flush(p);
    }

    // After a tile: when a lane may not hold the next tile's results. At the unit's end: all.
    __device__ __forceinline__ void after_tile(const MqaLogitsParams& p) const { flush_past(p, kLaneSlots - kPerTile); }
    __device__ __forceinline__ void finish(const MqaLogitsParams& p) const { flush_past(p, 0); }

    // No warp vote and no branch: only the store is predicated. Every lane of the warp calls it.
    // NOTES (2026-12-05): with an early return when no lane kept a logit and the in-place rows'
    // global stores here, nvcc 13.0 made each result a chain of three divergent regions (about 35
    // instructions and 100 static stall cycles; the wgmma twin's whole store is 4 instructions).
    __device__ __forceinline__ void store(const MqaLogitsParams&, int k, int base_col, float value) const {
        const int col = base_col + 8 * half[k];
        const bool keep = col >= lower[k] && col < upper[k] && !(value < threshold[k]);
        int& count = staged[count_of(k)];
        store_shared_if(keep, stage + (count_of(k) * kLaneSlots + count) * 32, make_int2(col, __float_as_int(value)));
        count += keep ? 1 : 0;
    }
};

}  // namespace mqa_sm90
