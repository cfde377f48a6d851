#pragma once
// The mma family: warp-level mma.sync with a cp.async pipeline, for any sm_80 or newer GPU.
// Variant mma16x8x<K>_bkv<B>_r<R>_w<W>_lds<S>:
//   K = 32: native e4m3 mma.sync.m16n8k32 (sm_89+); K = 16: e4m3 widened to f16 in registers, then
//   mma.sync.m16n8k16 (sm_80+). B = KV rows per tile, R = query rows per CTA, W = warps (warp w owns
//   KV rows [w*B/W, (w+1)*B/W) of each tile), S = cp.async stages for the KV tile.
//
// GEMM per KV tile: C[kv, n] = sum_d KV[kv, d] * Q[r, h, d] with n = r * H + h. A (M side) is the KV
// tile, B (N side) the CTA's Q rows, both row-major [row][d] bytes in shared memory with the 128B
// swizzle (mqa_common.cuh). logits[i, j] = kv_scales[j] * sum_h w[i, h] * relu(C[j, (i, h)]).
// Grid (num_q_blocks, num_kv_splits); mqa_common.cuh's plan_kv_work says which tiles a CTA computes.
//
// The part above `#if defined(__CUDACC__)` is host code too: the generator sizes shared memory with
// shared_layout() and the unit tests replay the lane mappings on the CPU.

#include "grid_dependency.cuh"
#include "mqa_common.cuh"
#include "mqa_logits_output.cuh"
#include "mqa_logits_params.cuh"

namespace mqa_sm80 {

using mqa::Range;

// ---- shared memory --------------------------------------------------------------------------------

// The N side (R*H columns) is multiplied in passes of whole query rows so that at most 64
// accumulators are live per thread.
// NOTES: with 128 (two m tiles x 128 columns) ptxas spilled or capped occupancy, depending on the
// arch; a second pass re-reads only the warp's own A fragments.
MQA_HOST_DEVICE constexpr int column_passes(int heads, int block_kv, int rows, int warps) {
    return (block_kv / warps / 16) * (rows * heads / 8) * 4 > 64 && rows % 2 == 0 ? 2 : 1;
}

// NOTES: in the epilogue, lane (g, t) stores query row t % P of a pass of P rows at KV row g (+8 per
// further slot); padding the staging rows by 32 / P floats (mod 32) puts those 32 stores in 32 banks.
MQA_HOST_DEVICE constexpr int staging_padding(int pass_rows) { return (32 / (pass_rows < 4 ? pass_rows : 4)) % 32; }

struct SharedLayout {
    int q_offset;        // Q tile: R * H rows of D bytes, swizzled
    int kv_offset;       // S stages, each B rows of D bytes, swizzled
    int kv_stage_bytes;
    int staging_offset;  // one tile's results: R rows of `staging_stride` floats
    int staging_stride;  // floats: B + padding
    int weights_offset;  // [R][H] floats: weights (times the f16 path's 2^16), 0 past S
    int windows_offset;  // R clamped windows (mqa::Range)
    int total_bytes;
};

MQA_HOST_DEVICE constexpr SharedLayout shared_layout(int heads, int head_dim, int block_kv, int rows, int warps,
                                                     int stages) {
    SharedLayout layout{};
    layout.q_offset = 0;
    layout.kv_offset = rows * heads * head_dim;
    layout.kv_stage_bytes = block_kv * head_dim;
    layout.staging_offset = layout.kv_offset + stages * layout.kv_stage_bytes;
    layout.staging_stride = block_kv + staging_padding(rows / column_passes(heads, block_kv, rows, warps));
    layout.weights_offset = layout.staging_offset + rows * layout.staging_stride * 4;
    layout.windows_offset = layout.weights_offset + rows * heads * 4;
    layout.total_bytes = layout.windows_offset + rows * static_cast<int>(sizeof(Range));
    return layout;
}

// ---- lane mappings for ldmatrix.x4 ---------------------------------------------------------------
// A (KV): matrices {rows 0-7, bytes 0-15}, {rows 8-15, bytes 0-15}, {rows 0-7, bytes 16-31},
// {rows 8-15, bytes 16-31} of a 16-row x 32-byte slice: registers a0..a3 of the m16n8k32 A fragment.
MQA_HOST_DEVICE constexpr int a_fragment_row(int lane) { return (lane & 7) | (lane & 8); }
MQA_HOST_DEVICE constexpr int a_fragment_chunk(int lane) { return lane >> 4; }
// B (Q): matrices {n 0-7, bytes 0-15}, {n 0-7, bytes 16-31}, {n 8-15, bytes 0-15}, {n 8-15, bytes 16-31}
// of a 16-column x 32-byte slice: registers b0, b1 of two consecutive n8 tiles.
MQA_HOST_DEVICE constexpr int b_fragment_row(int lane) { return (lane & 7) | ((lane >> 4) << 3); }
MQA_HOST_DEVICE constexpr int b_fragment_chunk(int lane) { return (lane >> 3) & 1; }

// The epilogue's per-thread result u covers (m tile, row half, query row): u = (mt * 2 + half) * R + r.
struct ResultSlot {
    int m_tile;
    int half;  // 0: accumulator row g, 1: row g + 8
    int row;   // query row within the CTA
};
MQA_HOST_DEVICE constexpr ResultSlot result_slot(int u, int rows) {
    return ResultSlot{(u / rows) >> 1, (u / rows) & 1, u % rows};
}

}  // namespace mqa_sm80

#if defined(__CUDACC__)

namespace mqa_sm80 {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 890
inline constexpr bool kArchHasFp8Mma = false;
#else
inline constexpr bool kArchHasFp8Mma = true;
#endif

// ---- one 32-byte K slice of a 16x8 tile ----------------------------------------------------------

template <bool kFp8Mma>
struct SliceMma;

// d += A (16x32 e4m3) * B (32x8 e4m3) with one native instruction.
template <>
struct SliceMma<true> {
    static constexpr int kARegisters = 4;
    static constexpr int kBRegisters = 2;
    static constexpr float kProductScale = 1.0f;

    __device__ __forceinline__ static void prepare_a(unsigned (&out)[4], const unsigned (&bytes)[4]) {
        #pragma unroll
        for (int i = 0; i < 4; ++i) out[i] = bytes[i];
    }
    __device__ __forceinline__ static void prepare_b(unsigned (&out)[2], unsigned low_bytes, unsigned high_bytes) {
        out[0] = low_bytes;
        out[1] = high_bytes;
    }
    __device__ __forceinline__ static void run(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
        asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
        (void)d, (void)a, (void)b;
        __trap();  // unreachable: the kernel body rejects fp8 mma below sm_89 at compile time
#endif
    }
};

// The same slice as two m16n8k16 f16 products. K is a reduction axis, so the bytes may be paired in
// any order that A and B share: lane t's fp8 register holds bytes 4t..4t+3 of its row; bytes
// (4t, 4t+1) play f16 k = (2t, 2t+1) and bytes (4t+2, 4t+3) play k = (2t+8, 2t+9), for A and B alike.
template <>
struct SliceMma<false> {
    static constexpr int kARegisters = 8;
    static constexpr int kBRegisters = 4;
    static constexpr float kProductScale = mqa::kF16ScaledProductCorrection;

    __device__ __forceinline__ static void prepare_a(unsigned (&out)[8], const unsigned (&bytes)[4]) {
        #pragma unroll
        for (int product = 0; product < 2; ++product) {
            const unsigned row_g = bytes[2 * product];      // row g, this product's 16 bytes
            const unsigned row_g8 = bytes[2 * product + 1];  // row g + 8
            out[4 * product + 0] = mqa::e4m3x2_to_f16x2_scaled(row_g, 0, 1);
            out[4 * product + 1] = mqa::e4m3x2_to_f16x2_scaled(row_g8, 0, 1);
            out[4 * product + 2] = mqa::e4m3x2_to_f16x2_scaled(row_g, 2, 3);
            out[4 * product + 3] = mqa::e4m3x2_to_f16x2_scaled(row_g8, 2, 3);
        }
    }
    __device__ __forceinline__ static void prepare_b(unsigned (&out)[4], unsigned low_bytes, unsigned high_bytes) {
        out[0] = mqa::e4m3x2_to_f16x2_scaled(low_bytes, 0, 1);
        out[1] = mqa::e4m3x2_to_f16x2_scaled(low_bytes, 2, 3);
        out[2] = mqa::e4m3x2_to_f16x2_scaled(high_bytes, 0, 1);
        out[3] = mqa::e4m3x2_to_f16x2_scaled(high_bytes, 2, 3);
    }
    __device__ __forceinline__ static void run(float (&d)[4], const unsigned (&a)[8], const unsigned (&b)[4]) {
        #pragma unroll
        for (int product = 0; product < 2; ++product) {
            asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                "{%0, %1, %2, %3};"
                : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                : "r"(a[4 * product]), "r"(a[4 * product + 1]), "r"(a[4 * product + 2]), "r"(a[4 * product + 3]),
                  "r"(b[2 * product]), "r"(b[2 * product + 1]));
        }
    }
};

// Four lanes of a quad each hold partial sums x0..x3; the result in lane t is the quad's sum of x<t>.
// NOTES: three shuffles for four values, where an all-reduce would take eight.
__device__ __forceinline__ float quad_reduce_scatter(float x0, float x1, float x2, float x3, int t) {
    const bool upper = (t & 2) != 0;
    float keep0 = upper ? x2 : x0;
    float keep1 = upper ? x3 : x1;
    keep0 += __shfl_xor_sync(0xFFFFFFFFu, upper ? x0 : x2, 2);
    keep1 += __shfl_xor_sync(0xFFFFFFFFu, upper ? x1 : x3, 2);
    const bool odd = (t & 1) != 0;
    return (odd ? keep1 : keep0) + __shfl_xor_sync(0xFFFFFFFFu, odd ? keep0 : keep1, 1);
}

__device__ __forceinline__ float relu(float x) { return x > 0.0f ? x : 0.0f; }

template <int kHeads, int kHeadDim, int kBlockKv, int kRows, int kWarps, int kStages, bool kFp8Mma>
struct MmaKernel {
    static constexpr int kThreads = kWarps * 32;
    static constexpr int kColumns = kRows * kHeads;  // GEMM N
    static constexpr int kWarpKv = kBlockKv / kWarps;
    static constexpr int kMTiles = kWarpKv / 16;
    static constexpr int kNTiles = kColumns / 8;
    static constexpr int kNTilesPerRow = kHeads / 8;
    static constexpr int kSlices = kHeadDim / 32;
    static constexpr int kChunksPerRow = kHeadDim / 16;
    static constexpr int kPasses = column_passes(kHeads, kBlockKv, kRows, kWarps);
    static constexpr int kPassRows = kRows / kPasses;
    static constexpr int kPassNTiles = kNTiles / kPasses;
    static constexpr int kResults = kMTiles * 2 * kPassRows;  // per thread and pass, before the quad reduction
    static constexpr int kResultGroups = (kResults + 3) / 4;

    static constexpr int kQOffset = shared_layout(kHeads, kHeadDim, kBlockKv, kRows, kWarps, kStages).q_offset;
    static constexpr int kKvOffset = shared_layout(kHeads, kHeadDim, kBlockKv, kRows, kWarps, kStages).kv_offset;
    static constexpr int kKvStageBytes = shared_layout(kHeads, kHeadDim, kBlockKv, kRows, kWarps, kStages).kv_stage_bytes;
    static constexpr int kStagingOffset = shared_layout(kHeads, kHeadDim, kBlockKv, kRows, kWarps, kStages).staging_offset;
    static constexpr int kStagingStride = shared_layout(kHeads, kHeadDim, kBlockKv, kRows, kWarps, kStages).staging_stride;
    static constexpr int kWeightsOffset = shared_layout(kHeads, kHeadDim, kBlockKv, kRows, kWarps, kStages).weights_offset;
    static constexpr int kWindowsOffset = shared_layout(kHeads, kHeadDim, kBlockKv, kRows, kWarps, kStages).windows_offset;
    static constexpr int kSharedBytes = shared_layout(kHeads, kHeadDim, kBlockKv, kRows, kWarps, kStages).total_bytes;

    using Mma = SliceMma<kFp8Mma>;

    static_assert(!kFp8Mma || kArchHasFp8Mma, "mma16x8x32 (native e4m3) needs sm_89 or newer; use mma16x8x16");
    static_assert(kHeads % 8 == 0, "heads must be a multiple of 8 (n8 tiles never straddle query rows)");
    static_assert(kHeadDim % 32 == 0 && kHeadDim <= 128, "head_dim must be 32, 64, 96 or 128");
    static_assert(kPassNTiles % 2 == 0, "rows x heads must be a multiple of 16 (ldmatrix.x4 loads n8 tile pairs)");
    static_assert(kMTiles * kPassNTiles * 4 <= 64, "over 64 accumulators per thread; raise w or lower r");
    static_assert(kBlockKv % kWarps == 0 && kWarpKv % 16 == 0, "each warp owns a multiple of 16 KV rows");
    static_assert(kStages >= 1, "at least one KV stage");

    // Issues cp.async for the CTA's Q rows (zeros past S); joins the next committed group.
    __device__ static void load_q(const MqaLogitsParams& p, unsigned q_tile, int first_row) {
        for (int c = threadIdx.x; c < kColumns * kChunksPerRow; c += kThreads) {
            const int n = c / kChunksPerRow;
            const int chunk = c % kChunksPerRow;
            const int row = first_row + n / kHeads;
            const bool valid = row < p.seq_len;
            const unsigned char* source =
                valid ? p.q + row * p.q_stride_s + (n % kHeads) * kHeadDim + chunk * 16 : p.q;
            mqa::copy_16_bytes_async(q_tile + mqa::swizzled_offset(n, chunk, kHeadDim), source, valid);
        }
    }

    // Issues cp.async for KV tile `tile` (zeros past N); joins the next committed group.
    __device__ static void load_kv(const MqaLogitsParams& p, unsigned kv_tile, int tile) {
        for (int c = threadIdx.x; c < kBlockKv * kChunksPerRow; c += kThreads) {
            const int row = c / kChunksPerRow;
            const int chunk = c % kChunksPerRow;
            const int kv = tile * kBlockKv + row;
            const bool valid = kv < p.seq_len_kv;
            const unsigned char* source = valid ? p.kv + kv * p.kv_stride_n + chunk * 16 : p.kv;
            mqa::copy_16_bytes_async(kv_tile + mqa::swizzled_offset(row, chunk, kHeadDim), source, valid);
        }
    }

    // acc[mt][nt] = this warp's 16 KV rows of m tile mt times the 8 columns of n tile
    // pass * kPassNTiles + nt.
    __device__ static void multiply(float (&acc)[kMTiles][kPassNTiles][4], unsigned q_tile, unsigned kv_tile,
                                    int pass, int warp, int lane) {
        const int a_row = warp * kWarpKv + a_fragment_row(lane);
        // NOTES: two K slices per unrolled step. Fully unrolled, ptxas hoisted every fragment load of
        // the tile and spilled at 255 registers, or, left to pick its own register target, spilled on
        // some archs. Two slices spill nowhere on sm_80/89/90a; on an H200 they ran ~4% faster than
        // one slice and ~6% slower (geometric mean) than the spill-prone full unroll.
        #pragma unroll 2
        for (int slice = 0; slice < kSlices; ++slice) {
            unsigned a[kMTiles][Mma::kARegisters];
            #pragma unroll
            for (int mt = 0; mt < kMTiles; ++mt) {
                unsigned bytes[4];
                mqa::load_matrix_x4(
                    bytes, kv_tile + mqa::swizzled_offset(a_row + mt * 16, 2 * slice + a_fragment_chunk(lane), kHeadDim));
                Mma::prepare_a(a[mt], bytes);
            }
            #pragma unroll
            for (int pair = 0; pair < kPassNTiles / 2; ++pair) {
                unsigned bytes[4];
                const int column = (pass * kPassNTiles + 2 * pair) * 8 + b_fragment_row(lane);
                mqa::load_matrix_x4(bytes, q_tile + mqa::swizzled_offset(column,
                                                                         2 * slice + b_fragment_chunk(lane), kHeadDim));
                unsigned b_even[Mma::kBRegisters];
                unsigned b_odd[Mma::kBRegisters];
                Mma::prepare_b(b_even, bytes[0], bytes[1]);
                Mma::prepare_b(b_odd, bytes[2], bytes[3]);
                #pragma unroll
                for (int mt = 0; mt < kMTiles; ++mt) {
                    Mma::run(acc[mt][2 * pair], a[mt], b_even);
                    Mma::run(acc[mt][2 * pair + 1], a[mt], b_odd);
                }
            }
        }
    }

    // Head-weighted relu sums of one pass into `staging` ([R][kStagingStride], before kv_scales).
    // Accumulator (mt, nt, 2*half + e) is KV row warp*kWarpKv + mt*16 + half*8 + g and pass column
    // nt*8 + 2t + e, i.e. query row pass*kPassRows + nt / (H/8), head (nt % (H/8))*8 + 2t + e.
    // NOTES: weights come from shared memory (one 8-byte broadcast load per head pair and row) rather
    // than registers: 32 more live registers across the main loop made the two-m-tile variants spill.
    __device__ static void reduce_heads(const float (&acc)[kMTiles][kPassNTiles][4], const float* weights,
                                        float* staging, int pass, int warp, int lane) {
        const int g = lane >> 2;
        const int t = lane & 3;
        float results[kResultGroups * 4];
        #pragma unroll
        for (int u = 0; u < kResultGroups * 4; ++u) results[u] = 0.0f;
        #pragma unroll
        for (int r = 0; r < kPassRows; ++r) {
            const float* row_weights = weights + (pass * kPassRows + r) * kHeads;
            #pragma unroll
            for (int j = 0; j < kNTilesPerRow; ++j) {
                const float2 w = *reinterpret_cast<const float2*>(row_weights + j * 8 + 2 * t);
                #pragma unroll
                for (int mt = 0; mt < kMTiles; ++mt) {
                    #pragma unroll
                    for (int half = 0; half < 2; ++half) {
                        const float(&c)[4] = acc[mt][r * kNTilesPerRow + j];
                        results[(mt * 2 + half) * kPassRows + r] += w.x * relu(c[2 * half]) + w.y * relu(c[2 * half + 1]);
                    }
                }
            }
        }

        #pragma unroll
        for (int group = 0; group < kResultGroups; ++group) {
            const float total = quad_reduce_scatter(results[4 * group], results[4 * group + 1],
                                                    results[4 * group + 2], results[4 * group + 3], t);
            const int u = 4 * group + t;
            if (u < kResults) {
                const ResultSlot slot = result_slot(u, kPassRows);
                staging[(pass * kPassRows + slot.row) * kStagingStride + warp * kWarpKv + slot.m_tile * 16 + slot.half * 8 + g] = total;
            }
        }
    }

    // Coalesced stores of one staged tile: times kv_scales[j]; -inf outside the row's window if clean.
    __device__ static void store(const MqaLogitsParams& p, const float* staging, const Range* windows, int first_row,
                                 int tile) {
        const bool dense_float32 = !p.logits_bf16 && p.compressed_columns == 0;  // what engines call
        for (int index = threadIdx.x; index < kRows * kBlockKv; index += kThreads) {
            const int r = index / kBlockKv;
            const int column = index % kBlockKv;
            const int row = first_row + r;
            const int kv = tile * kBlockKv + column;
            if (row >= p.seq_len || kv >= p.seq_len_kv) continue;
            const Range window = windows[r];
            const bool masked = p.clean_logits && (kv < window.begin || kv >= window.end);
            const float value =
                masked ? mqa::negative_infinity() : staging[r * kStagingStride + column] * p.kv_scales[kv];
            if (dense_float32) {
                static_cast<float*>(p.logits)[row * p.logits_stride_s + kv] = value;
            } else {
                mqa_output::store_if_held(p, mqa_output::logits_row(p, row), kv, value);
            }
        }
    }

    __device__ static void run(const MqaLogitsParams& p) {
        extern __shared__ __align__(128) unsigned char shared[];
        unsigned dynamic_shared_bytes;
        asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dynamic_shared_bytes));
        // NOTES: a launch with the wrong shape or too little shared memory would write out of bounds;
        // the host checks both, and this stops the kernel loudly if it ever does not.
        if (dynamic_shared_bytes < kSharedBytes || p.heads != kHeads || p.head_dim != kHeadDim) __trap();

        const int warp = threadIdx.x / 32;
        const int lane = threadIdx.x % 32;
        const int first_row = blockIdx.x * kRows;
        Range* windows = reinterpret_cast<Range*>(shared + kWindowsOffset);
        float* staging = reinterpret_cast<float*>(shared + kStagingOffset);
        float* weights = reinterpret_cast<float*>(shared + kWeightsOffset);
        const unsigned q_tile = mqa::shared_address(shared + kQOffset);
        const unsigned kv_tiles = mqa::shared_address(shared + kKvOffset);

        if (threadIdx.x < kRows) {
            const int row = first_row + threadIdx.x;
            windows[threadIdx.x] = row < p.seq_len ? mqa::clamp_window(p.cu_starts[row], p.cu_ends[row], p.seq_len_kv)
                                                   : Range{0, 0};
        }
        for (int index = threadIdx.x; index < kRows * kHeads; index += kThreads) {
            const int row = first_row + index / kHeads;
            weights[index] =
                row < p.seq_len ? p.weights[row * p.weights_stride_s + index % kHeads] * Mma::kProductScale : 0.0f;
        }
        __syncthreads();
        Range rows_window{0, 0};
        #pragma unroll
        for (int r = 0; r < kRows; ++r) rows_window = mqa::window_union(rows_window, windows[r]);
        const mqa::KvWork work = mqa::plan_kv_work(p.seq_len_kv, kBlockKv, p.num_kv_splits, blockIdx.y, rows_window);
        const int first_tile = work.computed_tiles.begin;
        const int num_tiles = work.computed_tiles.end - work.computed_tiles.begin;

        // NOTES: the first loads go out before the -inf fill so the two overlap.
        if (num_tiles > 0) {
            load_q(p, q_tile, first_row);
            #pragma unroll
            for (int stage = 0; stage + 1 < kStages; ++stage) {
                if (stage < num_tiles) load_kv(p, kv_tiles + stage * kKvStageBytes, first_tile + stage);
                // NOTES: committed even when empty, so group i always holds tile i and wait_group<S-2>
                // keeps meaning "tile t has landed" up to the last tile.
                mqa::commit_async_copies();
            }
        }
        if (p.clean_logits) {
            for (int r = 0; r < kRows && first_row + r < p.seq_len; ++r) {
                const mqa_output::LogitsRow logits_row = mqa_output::logits_row(p, first_row + r);
                mqa_output::fill_negative_infinity(p, logits_row, work.fill_before, threadIdx.x, kThreads);
                mqa_output::fill_negative_infinity(p, logits_row, work.fill_after, threadIdx.x, kThreads);
            }
        }
        if (num_tiles == 0) return;

        for (int t = 0; t < num_tiles; ++t) {
            if constexpr (kStages == 1) {
                __syncthreads();  // every warp is done reading the single stage
                load_kv(p, kv_tiles, first_tile + t);
                mqa::commit_async_copies();
                mqa::wait_async_copies<0>();
            } else {
                mqa::wait_async_copies<kStages - 2>();  // tile t (and Q) landed, for this thread's copies
            }
            // NOTES: makes every thread's copies visible, and guarantees all warps finished tile t-1,
            // whose stage the prefetch below overwrites, and the store of the staging buffer.
            __syncthreads();
            if constexpr (kStages > 1) {
                const int ahead = t + kStages - 1;
                if (ahead < num_tiles) load_kv(p, kv_tiles + (ahead % kStages) * kKvStageBytes, first_tile + ahead);
                mqa::commit_async_copies();
            }

            #pragma unroll 1
            for (int pass = 0; pass < kPasses; ++pass) {
                float acc[kMTiles][kPassNTiles][4];
                #pragma unroll
                for (int mt = 0; mt < kMTiles; ++mt) {
                    #pragma unroll
                    for (int nt = 0; nt < kPassNTiles; ++nt) {
                        #pragma unroll
                        for (int k = 0; k < 4; ++k) acc[mt][nt][k] = 0.0f;
                    }
                }
                multiply(acc, q_tile, kv_tiles + (t % kStages) * kKvStageBytes, pass, warp, lane);
                reduce_heads(acc, weights, staging, pass, warp, lane);
            }
            __syncthreads();
            store(p, staging, windows, first_row, first_tile + t);
        }
        mqa::wait_async_copies<0>();  // only empty groups remain; leave none behind
    }
};

}  // namespace mqa_sm80

template <int kHeads, int kHeadDim, int kBlockKv, int kRows, int kWarps, int kStages, bool kFp8Mma>
__device__ __forceinline__ void sm80_mqa_logits_body(const MqaLogitsParams& p) {
    mqa_sm80::MmaKernel<kHeads, kHeadDim, kBlockKv, kRows, kWarps, kStages, kFp8Mma>::run(p);
}

// Defines `extern "C" __global__ void NAME(const __grid_constant__ MqaLogitsParams p)`, launched with
// grid (num_q_blocks, num_kv_splits), WARPS * 32 threads and shared_layout(...).total_bytes of dynamic
// shared memory.
// NOTES: a minimum of one block per SM lets ptxas use all 255 registers; left to pick its own target
// it sometimes chose one that spilled.
#define MQA_SM80_MQA_LOGITS_KERNEL(NAME, HEADS, HEAD_DIM, BLOCK_KV, ROWS, WARPS, STAGES, FP8_MMA)   \
    extern "C" __global__ void __launch_bounds__((WARPS) * 32, 1)                                  \
        NAME(const __grid_constant__ MqaLogitsParams p) {                                          \
        mqa_pdl::grid_dependency_wait();                                                           \
        sm80_mqa_logits_body<HEADS, HEAD_DIM, BLOCK_KV, ROWS, WARPS, STAGES, FP8_MMA>(p);          \
    }

#endif  // __CUDACC__
