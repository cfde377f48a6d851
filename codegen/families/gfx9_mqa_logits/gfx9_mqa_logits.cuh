#pragma once
// The mfma family: AMD CDNA3 (gfx942) and CDNA4 (gfx950) fp8 MFMA, compiled by clang as HIP with
// hip_minimal.cuh (no ROCm headers). Variant mfma<M>x<N>x<K>_bkv<B>_r<R>_w<W>_lds<S>:
//   M = N: the MFMA tile (32 or 16), K: its depth (gfx950 32x32x64 / 16x16x128 scaled f8f6f4 with
//   identity scales and native e4m3fn; gfx942 32x32x16 / 16x16x32 with e4m3fnuz, gfx9_mfma.cuh).
//   B = KV columns per tile, R = query rows per wave, W = waves of 64 lanes (block rows = R x W),
//   S = LDS buffers for the KV tile (one register stage ahead, so the prefetch depth is 2).
//
// GEMM per (query row i, KV tile): C[h, j] = sum_d Q[i, h, d] * KV[j, d]. A (the MFMA's M side) is
// heads, B (its N side) is M KV columns, so lane l of the C tile holds KV column l % M and a set of
// heads; the head-weighted relu sum is 16 (or 4) FMAs in the lane plus one (or two) cross-lane adds.
// logits[i, j] = kv_scales[j] * sum_h w[i, h] * relu(C[h, j]). Grid (num_q_blocks, num_kv_splits);
// mqa_common.cuh's plan_kv_work says which tiles a block computes and where it writes -inf.
//
// The part outside `#if defined(__HIP_DEVICE_COMPILE__)` is host code too: the generator sizes LDS
// with gfx9_lds_bytes(). The MFMA instructions, fp8 formats and lane layouts are gfx9_mfma.cuh's.

#include "gfx9_mfma.cuh"
#include "mqa_logits_output.cuh"
#include "mqa_logits_params.cuh"

namespace mqa_gfx9 {

// LDS of one block: the block's Q rows (R*W*H rows of D bytes), then S KV buffers of B rows of D
// bytes, both 16-byte-chunk swizzled. variants/mfma_rules.cpp checks the same sum against the arch.
MQA_GFX9_HOST_DEVICE constexpr int q_lds_bytes(int heads, int head_dim, int rows, int waves) {
    return rows * waves * heads * head_dim;
}
MQA_GFX9_HOST_DEVICE constexpr int gfx9_lds_bytes(int heads, int head_dim, int block_kv, int rows, int waves,
                                                  int buffers) {
    return q_lds_bytes(heads, head_dim, rows, waves) + buffers * block_kv * head_dim;
}

}  // namespace mqa_gfx9

#if defined(__HIP_DEVICE_COMPILE__)

namespace mqa_gfx9 {

using mqa::Range;

template <int kHeads, int kHeadDim, int kM, int kK, int kBlockKv, int kRows, int kWaves, int kBuffers>
struct MfmaKernel {
    using Op = Mfma<kM, kK>;
    using Operand = typename Op::Operand;
    using Accumulator = typename Op::Accumulator;

    static constexpr int kThreads = kWaves * 64;
    static constexpr int kBlockRows = kRows * kWaves;
    static constexpr int kMTiles = kHeads / kM;          // head tiles
    static constexpr int kNTiles = kBlockKv / kM;        // KV column tiles per KV tile
    static constexpr int kSteps = kHeadDim / kK;         // MFMAs along d
    static constexpr int kOperandBytes = operand_bytes_per_lane(kM, kK);
    static constexpr int kAccumulators = accumulators_per_lane(kM);
    static constexpr int kChunksPerRow = kHeadDim / 16;
    static constexpr int kKvChunksPerThread = kBlockKv * kChunksPerRow / kThreads;
    static constexpr int kQBytes = q_lds_bytes(kHeads, kHeadDim, kRows, kWaves);
    static constexpr int kKvBufferBytes = kBlockKv * kHeadDim;
    static constexpr float kProductScale = Op::kFnuz ? kFnuzProductCorrection : 1.0f;

    static_assert(sizeof(Operand) == kOperandBytes, "the MFMA operand type must hold one lane's share of A");
    static_assert(kHeads % kM == 0, "heads must be a multiple of the MFMA tile");
    static_assert(kHeadDim % kK == 0 && kHeadDim % 16 == 0, "head_dim must be a multiple of the MFMA depth");
    static_assert(kBlockKv % kM == 0, "bkv must be a multiple of the MFMA tile");
    static_assert(kBlockKv * kChunksPerRow % kThreads == 0, "every thread copies the same number of KV chunks");

    // The block's Q rows into LDS (zeros past S), converted for the MFMA's fp8 format.
    __device__ static void load_q(const MqaLogitsParams& p, unsigned char* q_lds, int first_row) {
        for (int c = hip_minimal::thread_x(); c < kBlockRows * kHeads * kChunksPerRow; c += kThreads) {
            const int n = c / kChunksPerRow;
            const int chunk = c % kChunksPerRow;
            const int row = first_row + n / kHeads;
            Int32x4 value = Int32x4{0, 0, 0, 0};
            if (row < p.seq_len) {
                value = *reinterpret_cast<const Int32x4*>(p.q + row * p.q_stride_s + (n % kHeads) * kHeadDim + chunk * 16);
            }
            *reinterpret_cast<Int32x4*>(q_lds + mqa::swizzled_offset(n, chunk, kHeadDim)) = to_mfma_format<Op>(value);
        }
    }

    // KV tile `tile` from global memory into registers (zeros past N).
    __device__ static void fetch_kv(const MqaLogitsParams& p, Int32x4 (&staged)[kKvChunksPerThread], int tile) {
        #pragma unroll
        for (int i = 0; i < kKvChunksPerThread; ++i) {
            const int c = hip_minimal::thread_x() + i * kThreads;
            const int kv = tile * kBlockKv + c / kChunksPerRow;
            staged[i] = kv < p.seq_len_kv
                            ? *reinterpret_cast<const Int32x4*>(p.kv + kv * p.kv_stride_n + (c % kChunksPerRow) * 16)
                            : Int32x4{0, 0, 0, 0};
        }
    }

    __device__ static void store_kv(const Int32x4 (&staged)[kKvChunksPerThread], unsigned char* buffer) {
        #pragma unroll
        for (int i = 0; i < kKvChunksPerThread; ++i) {
            const int c = hip_minimal::thread_x() + i * kThreads;
            *reinterpret_cast<Int32x4*>(buffer + mqa::swizzled_offset(c / kChunksPerRow, c % kChunksPerRow, kHeadDim)) =
                to_mfma_format<Op>(staged[i]);
        }
    }

    // This wave's R rows against one KV tile in LDS; writes the scaled (or -inf) logits.
    __device__ static void compute_tile(const MqaLogitsParams& p, const unsigned char* q_lds, const unsigned char* kv_lds,
                                        int first_row, int wave, int lane, int tile) {
        const int group = lane / kM;
        const int column_in_tile = lane % kM;
        #pragma unroll 1
        for (int r = 0; r < kRows; ++r) {
            const int row = first_row + wave * kRows + r;
            if (row >= p.seq_len) break;  // uniform across the wave
            // NOTES: re-read per tile rather than kept in an array: a dynamically indexed array goes
            // to scratch memory.
            const Range window = mqa::clamp_window(p.cu_starts[row], p.cu_ends[row], p.seq_len_kv);

            Operand q[kMTiles][kSteps];
            float weights[kMTiles][kAccumulators];
            #pragma unroll
            for (int mt = 0; mt < kMTiles; ++mt) {
                const int q_row = (wave * kRows + r) * kHeads + mt * kM + column_in_tile;
                #pragma unroll
                for (int s = 0; s < kSteps; ++s) q[mt][s] = load_operand<Operand, kM, kK, kHeadDim>(q_lds, q_row, s, group);
                #pragma unroll
                for (int a = 0; a < kAccumulators; ++a) {
                    const int head = mt * kM + accumulator_row(kM, lane, a);
                    weights[mt][a] = p.weights[row * p.weights_stride_s + head] * kProductScale;
                }
            }
            const mqa_output::LogitsRow logits_row = mqa_output::logits_row(p, row);

            #pragma unroll 1
            for (int nt = 0; nt < kNTiles; ++nt) {
                Accumulator acc[kMTiles];
                #pragma unroll
                for (int mt = 0; mt < kMTiles; ++mt) acc[mt] = Accumulator{};
                #pragma unroll
                for (int s = 0; s < kSteps; ++s) {
                    const Operand kv =
                        load_operand<Operand, kM, kK, kHeadDim>(kv_lds, nt * kM + column_in_tile, s, group);
                    #pragma unroll
                    for (int mt = 0; mt < kMTiles; ++mt) acc[mt] = Op::run(q[mt][s], kv, acc[mt]);
                }
                float sum = 0.0f;
                #pragma unroll
                for (int mt = 0; mt < kMTiles; ++mt) {
                    #pragma unroll
                    for (int a = 0; a < kAccumulators; ++a) sum += weights[mt][a] * __builtin_fmaxf(acc[mt][a], 0.0f);
                }
                // Lanes with the same KV column hold the other heads: 2 (M = 32) or 4 (M = 16) groups.
                sum += hip_minimal::shuffle_xor(sum, 32);
                if constexpr (kM == 16) sum += hip_minimal::shuffle_xor(sum, 16);

                const int kv = tile * kBlockKv + nt * kM + column_in_tile;
                if (lane < kM && kv < p.seq_len_kv) {
                    const bool masked = p.clean_logits && (kv < window.begin || kv >= window.end);
                    mqa_output::store_if_held(p, logits_row, kv,
                                              masked ? hip_minimal::negative_infinity() : sum * p.kv_scales[kv]);
                }
            }
        }
    }

    __device__ static void run(const MqaLogitsParams& p) {
        extern __shared__ __attribute__((aligned(16))) unsigned char shared[];
        // NOTES: a launch with another shape would read and write out of bounds; the host checks it,
        // and this stops the kernel loudly if it ever does not.
        if (p.heads != kHeads || p.head_dim != kHeadDim) __builtin_trap();

        const int thread = hip_minimal::thread_x();
        const int wave = thread / 64;
        const int lane = thread % 64;
        const int first_row = hip_minimal::block_x() * kBlockRows;
        unsigned char* q_lds = shared;
        unsigned char* kv_lds = shared + kQBytes;

        Range rows_window{0, 0};
        for (int r = 0; r < kBlockRows && first_row + r < p.seq_len; ++r) {
            const int row = first_row + r;
            rows_window = mqa::window_union(rows_window, mqa::clamp_window(p.cu_starts[row], p.cu_ends[row], p.seq_len_kv));
        }
        const mqa::KvWork work = mqa::plan_kv_work(p.seq_len_kv, kBlockKv, p.num_kv_splits, hip_minimal::block_y(), rows_window);
        const int first_tile = work.computed_tiles.begin;
        const int num_tiles = work.computed_tiles.end - work.computed_tiles.begin;

        Int32x4 staged[kKvChunksPerThread];
        const auto fetch = [&](int tile) { fetch_kv(p, staged, first_tile + tile); };
        const auto store = [&](int buffer) { store_kv(staged, kv_lds + buffer * kKvBufferBytes); };
        if (num_tiles > 0) {
            load_q(p, q_lds, first_row);
            StagedRing<kBuffers>::prime(num_tiles, fetch, store);
        }
        if (p.clean_logits) {
            for (int r = 0; r < kBlockRows && first_row + r < p.seq_len; ++r) {
                const mqa_output::LogitsRow logits_row = mqa_output::logits_row(p, first_row + r);
                mqa_output::fill_negative_infinity(p, logits_row, work.fill_before, thread, kThreads);
                mqa_output::fill_negative_infinity(p, logits_row, work.fill_after, thread, kThreads);
            }
        }
        if (num_tiles == 0) return;  // uniform across the block

        StagedRing<kBuffers>::run(num_tiles, fetch, store, [&](int tile, int buffer) {
            compute_tile(p, q_lds, kv_lds + buffer * kKvBufferBytes, first_row, wave, lane, first_tile + tile);
        });
    }
};

}  // namespace mqa_gfx9

// Defines `extern "C" __global__ void NAME(MqaLogitsParams p)`, launched with grid (num_q_blocks,
// num_kv_splits), WAVES * 64 threads and gfx9_lds_bytes(...) of dynamic LDS.
#define MQA_GFX9_MQA_LOGITS_KERNEL(NAME, HEADS, HEAD_DIM, M, K, BLOCK_KV, ROWS, WAVES, BUFFERS)              \
    extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size((WAVES) * 64, (WAVES) * 64)))   \
        NAME(MqaLogitsParams p) {                                                                          \
        mqa_gfx9::MfmaKernel<HEADS, HEAD_DIM, M, K, BLOCK_KV, ROWS, WAVES, BUFFERS>::run(p);               \
    }

#endif  // __HIP_DEVICE_COMPILE__
