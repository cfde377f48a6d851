#pragma once
// The mqa_topk family's epilogue for the sm90 kernel (sm90_epilogue.cuh's OwnedResults, third
// output): a logit is kept only when it lies inside its row's window and is not below the row's
// threshold; then it is appended, with its key column, to the row's candidate buffer. Nothing else
// is stored, so the [S, N] logits never reach memory. `!(value < threshold)` also keeps NaN, which
// the final select orders exactly.
//
// Each math warp stages its kept logits per row of its unit in shared memory, counted in
// registers (every lane holding a row keeps the row's count, advanced by the same warp votes), and
// after a tile that may leave a row too little room for the next, and at the unit's end, moves its
// rows' stages to their buffers: one atomicAdd per row reserves the slots. A row whose threshold
// is -inf keeps its whole window: its key col goes to slot col - window start (the count was set
// to the window's size beforehand), with no atomic. NOTES (H200 and H100,
// 2026-12-05): an atomicAdd per kept logit made the twgmma kernel 2.1-4.3x its twin's time; one per
// warp and store (the lanes holding one row's results) 2.3x: the epilogue waited on each atomic's
// reply. A stage whose counts lived in shared memory, with two warp barriers per store and its move
// to the buffer inlined after every store, was slower still (5.6x at N = 8192).

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
    // A row's results in one tile: two quads' worth (16 lanes) per m64 slice. The stage holds
    // MQA_TOPK_STAGE_TILES tiles' worth, so a stage with at least one tile's room left takes the
    // next tile whole. It lies in dynamic shared memory past the twin's layout: kSharedBytes more
    // than the twin's (sm90_topk_stage_bytes() on the host, tests/test_topk_epilogue_logic.cpp
    // holds the two equal). NOTES (H100, 2026-12-05): four tiles instead of two made the kernel
    // 0.76-0.89x its time, eight instead of four 0.81-0.95x.
    static constexpr int kMostPerTile = 16 * kMTiles;
    static constexpr int kStage = MQA_TOPK_STAGE_TILES * kMostPerTile;
    static constexpr unsigned kSharedBytes = kWarps * kRows * (kStage * 8 + 4);
    // Results k and k + 1 share a row when there are four rows or more: one count per pair.
    static constexpr int kCounts = kRows >= 4 ? R::kHeld / 2 : 1;
    __device__ __forceinline__ static constexpr int count_of(int k) { return kRows >= 4 ? k / 2 : 0; }

    // Row k's window, clamped; empty for a result this lane does not keep (past seq_len, or a
    // lane whose copy another lane keeps), so the window test alone says whether to keep.
    int lower[R::kHeld];
    int upper[R::kHeld];
    int half[R::kHeld];
    float threshold[R::kHeld];
    unsigned same_row[R::kHeld];  // the lanes whose result k belongs to this lane's row
    int stage_row[R::kHeld];      // result k's row's first entry in this warp's stage
    unsigned held_rows;           // bit k: result k belongs to a row this lane may count
    unsigned lanes_below;         // the lanes of the warp below this one
    mutable int staged[kCounts];  // this lane's rows' staged logits (the same in every lane holding the row)
    int first_row;
    int2* stage;       // this warp's [kRows][kStage] (key, value bits)
    int* row_counts;   // this warp's [kRows], for the move to the buffers

    // `shared`: kSharedBytes of shared memory, 8-byte aligned, for the block's math warps.
    __device__ __forceinline__ void load(const MqaLogitsParams& p, int unit_first_row, int quad_lane,
                                         unsigned char* shared) {
        int2* const stages = reinterpret_cast<int2*>(shared);
        int* const counts = reinterpret_cast<int*>(stages + kWarps * kRows * kStage);
        const int lane = static_cast<int>(threadIdx.x % 32);
        const int warp = static_cast<int>(threadIdx.x / 32) - 4;  // warpgroup 0 produces
        stage = stages + warp * kRows * kStage;
        row_counts = counts + warp * kRows;
        first_row = unit_first_row;
        lanes_below = (1u << lane) - 1u;
        held_rows = 0;
#pragma unroll
        for (int c = 0; c < kCounts; ++c) staged[c] = 0;
#pragma unroll
        for (int k = 0; k < R::kHeld; ++k) {
            const int item = R::item(k, quad_lane);
            const int r = first_row + item / 2;
            half[k] = item % 2;
            stage_row[k] = item / 2 * kStage;
            const bool valid = R::stores(quad_lane) && r < p.seq_len;
            if (valid) held_rows |= 1u << k;
            const int begin = valid ? p.cu_starts[r] : 0;
            const int end = valid ? p.cu_ends[r] : 0;
            lower[k] = begin < 0 ? 0 : begin;
            upper[k] = end > p.seq_len_kv ? p.seq_len_kv : end;
            threshold[k] = valid ? p.topk_thresholds[r] : 0.f;
            same_row[k] = __match_any_sync(kFullMask, valid ? r : -1);
        }
    }

    // This lane's entries of row r's stage (entry lane + 32 j), the first `count` of them.
    static constexpr int kEntriesPerLane = kStage / 32;
    __device__ __forceinline__ void load_stage_row(int r, int count, int2 (&entries)[kEntriesPerLane]) const {
        const int lane = static_cast<int>(threadIdx.x % 32);
#pragma unroll
        for (int j = 0; j < kEntriesPerLane; ++j) {
            const int i = lane + 32 * j;
            entries[j] = i < count ? stage[r * kStage + i] : make_int2(0, 0);
        }
    }

    // Moves every staged row of this warp to its candidate buffer. Every lane of the warp calls it.
    // A row whose threshold is -inf keeps its whole window in place (key col at slot col - window
    // start; its count was set to the window's size beforehand); the others reserve their slots
    // with one atomicAdd.
    // NOTES (H100, 2026-12-07, docs/PERFORMANCE.md stop 54): reading each row's entries ahead of the
    // previous row's stores (a loop of load, then store, per entry before) took the fused call to
    // 0.88-0.97x its time at H=32 N >= 8192 and 0.92-0.97x at H=64 (4096 x 32768: 1.00-1.02x).
    // Reserving the slots a tile before the copy, so that the atomic's reply is not waited for, lost
    // at H=64 (1.06-1.21x) in both forms tried (half stages; a ring at six tiles' worth): the
    // patches are in docs/data/2026-12-07-h100-stop54/.
    __device__ __forceinline__ void flush(const MqaLogitsParams& p) const {
        const int lane = static_cast<int>(threadIdx.x % 32);
        if (lane < kRows) row_counts[lane] = 0;
        __syncwarp();
        if (lane < 4) {  // group row 0 of each quad lane: between them, every row a lane holds
#pragma unroll
            for (int k = 0; k < R::kHeld; ++k)
                if (held_rows & (1u << k)) row_counts[stage_row[k] / kStage] = staged[count_of(k)];
        }
        __syncwarp();  // the counts and every lane's stage entries are visible to the warp
        const int count = lane < kRows ? row_counts[lane] : 0;
        int first_slot = 0;  // in place: minus the window's start
        bool in_place = false;
        if (count > 0) {
            const int row = first_row + lane;
            in_place = p.topk_thresholds[row] == -__int_as_float(0x7f800000);
            if (in_place) {
                first_slot = -max(p.cu_starts[row], 0);
            } else {
                first_slot = atomicAdd(p.topk_counts + row, count);
            }
        }
        const unsigned in_place_rows = __ballot_sync(kFullMask, in_place);
        // Row r + 1's entries are read before row r's are stored: the stage and the buffers are
        // generic pointers to ptxas, so a load after a store would wait for it.
        int2 entries[kEntriesPerLane], next[kEntriesPerLane];
        load_stage_row(0, __shfl_sync(kFullMask, count, 0), entries);
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
            const int row_count = __shfl_sync(kFullMask, count, r);
            const int row_first = __shfl_sync(kFullMask, first_slot, r);
            if (r + 1 < kRows) load_stage_row(r + 1, __shfl_sync(kFullMask, count, r + 1), next);
            const bool row_in_place = (in_place_rows >> r) & 1u;
            const long long row_base = static_cast<long long>(first_row + r) * p.topk_capacity;
#pragma unroll
            for (int j = 0; j < kEntriesPerLane; ++j) {
                const int i = lane + 32 * j;
                const int slot = row_first + (row_in_place ? entries[j].x : i);
                if (i < row_count && slot < p.topk_capacity) {
                    p.topk_keys[row_base + slot] = entries[j].x;
                    p.topk_values[row_base + slot] = __int_as_float(entries[j].y);
                }
            }
            if (r + 1 < kRows) {
#pragma unroll
                for (int j = 0; j < kEntriesPerLane; ++j) entries[j] = next[j];
            }
        }
#pragma unroll
        for (int c = 0; c < kCounts; ++c) staged[c] = 0;
        __syncwarp();  // the stage is read before the next tile's entries overwrite it
    }

    // Moves the stages on when some lane of the warp holds a row with more than `most` staged.
    __device__ __forceinline__ void flush_past(const MqaLogitsParams& p, int most) const {
        bool past = false;
#pragma unroll
        for (int c = 0; c < kCounts; ++c) past = past || staged[c] > most;
        if (__any_sync(kFullMask, past)) flush(p);
    }

    // After a tile: when a row may not hold the next tile's results. At the unit's end: all.
    __device__ __forceinline__ void after_tile(const MqaLogitsParams& p) const { flush_past(p, kStage - kMostPerTile); }
    __device__ __forceinline__ void finish(const MqaLogitsParams& p) const { flush_past(p, 0); }

    // Every lane of the warp calls it (the stage's slots are handed out by a warp vote). No branch:
    // only the store is predicated, so ptxas can interleave consecutive results' votes.
    // NOTES (2026-12-05): with an early return when no lane kept a logit and the in-place rows'
    // global stores here, nvcc 13.0 made each result a chain of three divergent regions (about 35
    // instructions and 100 static stall cycles; the wgmma twin's whole store is 4 instructions).
    __device__ __forceinline__ void store(const MqaLogitsParams&, int k, int base_col, float value) const {
        const int col = base_col + 8 * half[k];
        const bool keep = col >= lower[k] && col < upper[k] && !(value < threshold[k]);
        const unsigned kept = __ballot_sync(kFullMask, keep) & same_row[k];
        int& count = staged[count_of(k)];
        const int at = stage_row[k] + count + __popc(kept & lanes_below);
        store_shared_if(keep, stage + at, make_int2(col, __float_as_int(value)));
        count += __popc(kept);
    }
};

}  // namespace mqa_sm90
