#pragma once
// The gfx9 paged_mqa_logits (decode) family: AMD CDNA3 (gfx942) and CDNA4 (gfx950) fp8 MFMA over the
// paged KV cache, compiled by clang as HIP with hip_minimal.cuh (no ROCm headers). Variant
// pmfma<M>x<N>x<K>_bkv<B>_r<next_n>_w<W>_lds<S> instantiates PagedMfmaKernel<H, D, M, K, B, next_n, W, S>:
//   M = N, K: the fp8 MFMA (gfx9_mfma.cuh), B = the cache's tokens per block (one block per step),
//   next_n = query tokens per request, W = waves of 64 lanes, S = LDS buffers for cache blocks.
//
// Work: grid (B requests, splits); workgroup (b, y) reads request b's context lengths on the device,
// takes split y of the cache blocks the request needs (mqa::split_tile_range: equal runs, the last
// ones maybe empty) and, with clean_logits, a 1/splits share of the request's -inf tail. The split
// count comes from the host plan and is read back as gridDim.y, so the schedule needs no host step
// and no device memory of its own: lengths and block tables may change between graph replays.
//
// Per cache block the workgroup's waves share the (token, M-column tile) pairs: for each, the MFMA's
// M side is the token's heads and its N side M keys, C[h, j] = sum_d Q[b, t, h, d] * K[j, d], so a
// lane holds key column lane % M and the head-weighted relu sum is in-lane FMAs plus one (M = 32) or
// two (M = 16) cross-lane adds, as in the prefill kernel. A wave keeps its token's Q operands and
// weights in registers while consecutive pairs share the token.
// Pipeline: Q in LDS once; the keys and scales of each cache block go through gfx9_mfma.cuh's
// StagedRing (block t + S - 1 in registers while block t is multiplied; one barrier per block).
//
// The part outside `#if defined(__HIP_DEVICE_COMPILE__)` is host code too: the generator sizes LDS
// with paged_lds_bytes() and the unit tests check the schedule on the CPU.

#include "gfx9_mfma.cuh"
#include "paged_mqa_logits_params.cuh"

namespace mqa_gfx9_paged {

// LDS of one workgroup: the request's Q (next_n * H rows of D bytes), then S buffers each holding a
// cache block's keys (B rows of D bytes; both swizzled in 16-byte chunks) and its B fp32 scales.
MQA_GFX9_HOST_DEVICE constexpr int q_lds_bytes(int heads, int head_dim, int next_n) { return next_n * heads * head_dim; }
MQA_GFX9_HOST_DEVICE constexpr int block_buffer_bytes(int head_dim, int block_kv) {
    return block_kv * head_dim + block_kv * 4;
}
MQA_GFX9_HOST_DEVICE constexpr int paged_lds_bytes(int heads, int head_dim, int next_n, int block_kv, int buffers) {
    return q_lds_bytes(heads, head_dim, next_n) + buffers * block_buffer_bytes(head_dim, block_kv);
}

// The (token, M-column tile) pairs of one cache block, which the waves share equally.
MQA_GFX9_HOST_DEVICE constexpr int block_pairs(int next_n, int block_kv, int m) { return next_n * (block_kv / m); }

// How many keys token `token` of request `request` sees, within [0, max_context_len].
MQA_GFX9_HOST_DEVICE int visible_keys(const PagedMqaLogitsParams& p, int request, int token) {
    const int keys = p.context_lens_2d ? p.context_lens[static_cast<long long>(request) * p.context_lens_stride + token]
                                       : p.context_lens[request] - p.next_n + token + 1;
    return mqa::min_int(mqa::max_int(keys, 0), p.max_context_len);
}

// Cache blocks request `request` needs: those its farthest-seeing token reads.
MQA_GFX9_HOST_DEVICE int request_blocks(const PagedMqaLogitsParams& p, int request) {
    int keys = 0;
    for (int t = 0; t < p.next_n; ++t) keys = mqa::max_int(keys, visible_keys(p, request, t));
    return mqa::ceil_div(keys, p.block_kv);
}

// What workgroup (request, split) of `splits` does: it computes the request's cache blocks
// [blocks.begin, blocks.end) and, with clean_logits, writes -inf to the columns from tail_begin on
// that are its share of the tail (every splits-th run of the workgroup's threads, from the split's).
struct SplitWork {
    mqa::Range blocks;
    int tail_begin;
};

MQA_GFX9_HOST_DEVICE SplitWork split_work(const PagedMqaLogitsParams& p, int request, int split, int splits) {
    const int blocks = request_blocks(p, request);
    return SplitWork{mqa::split_tile_range(blocks, splits, split), blocks * p.block_kv};
}

// The first tail column thread `thread` of `threads` in split `split` writes; it then steps by
// splits * threads.
MQA_GFX9_HOST_DEVICE constexpr int first_tail_column(int tail_begin, int split, int threads, int thread) {
    return tail_begin + split * threads + thread;
}

}  // namespace mqa_gfx9_paged

#if defined(__HIP_DEVICE_COMPILE__)

namespace mqa_gfx9_paged {

using namespace mqa_gfx9;

template <int kHeads, int kHeadDim, int kM, int kK, int kBlockKv, int kNextN, int kWaves, int kBuffers>
struct PagedMfmaKernel {
    using Op = Mfma<kM, kK>;
    using Operand = typename Op::Operand;
    using Accumulator = typename Op::Accumulator;

    static constexpr int kThreads = kWaves * 64;
    static constexpr int kMTiles = kHeads / kM;     // head tiles
    static constexpr int kNTiles = kBlockKv / kM;   // key column tiles per cache block
    static constexpr int kSteps = kHeadDim / kK;    // MFMAs along d
    static constexpr int kAccumulators = accumulators_per_lane(kM);
    static constexpr int kChunksPerRow = kHeadDim / 16;
    static constexpr int kKeyBytes = kBlockKv * kHeadDim;
    static constexpr int kKeyChunksPerThread = kKeyBytes / 16 / kThreads;
    static constexpr int kScaleChunks = kBlockKv * 4 / 16;
    static constexpr int kQBytes = q_lds_bytes(kHeads, kHeadDim, kNextN);
    static constexpr int kBufferBytes = block_buffer_bytes(kHeadDim, kBlockKv);
    static constexpr int kPairsPerWave = block_pairs(kNextN, kBlockKv, kM) / kWaves;
    static constexpr float kProductScale = Op::kFnuz ? kFnuzProductCorrection : 1.0f;

    static_assert(sizeof(Operand) == operand_bytes_per_lane(kM, kK), "the MFMA operand type must hold one lane's share");
    static_assert(kHeads % kM == 0, "heads must be a multiple of the MFMA tile");
    static_assert(kHeadDim % kK == 0 && kHeadDim % 16 == 0, "head_dim must be a multiple of the MFMA depth");
    static_assert(kBlockKv % kM == 0, "block_kv must be a multiple of the MFMA tile");
    static_assert(kKeyBytes / 16 % kThreads == 0, "every thread copies the same number of key chunks");
    static_assert(kScaleChunks <= kThreads, "one thread per 16-byte chunk of scales");
    static_assert(block_pairs(kNextN, kBlockKv, kM) % kWaves == 0, "every wave takes the same number of pairs");
    static_assert(kNextN >= 1 && kNextN <= 4, "next_n 1 to 4");

    // One cache block in flight: this thread's chunks of its keys and, for the first kScaleChunks
    // threads, of its scales.
    struct Staged {
        Int32x4 keys[kKeyChunksPerThread];
        Int32x4 scales;
    };

    // The token a wave computes now: its Q operands, head weights, output row and visible keys.
    struct HeldToken {
        int token = -1;
        int visible = 0;
        float* row = nullptr;
        Operand q[kMTiles][kSteps];
        float weights[kMTiles][kAccumulators];
    };

    // Cache block `block` of the request's keys, or null when its index is outside the cache
    // (it then reads as zeros).
    __device__ __forceinline__ static const unsigned char* cache_block(const PagedMqaLogitsParams& p, int request,
                                                                      int block) {
        const int index = p.block_table[static_cast<long long>(request) * p.block_table_stride + block];
        if (index < 0 || index >= p.num_cache_blocks) return nullptr;
        return p.kv_cache + static_cast<long long>(index) * p.cache_block_bytes;
    }

    // The request's next_n x H rows of Q into LDS, converted for the MFMA's fp8 format.
    __device__ static void load_q(const PagedMqaLogitsParams& p, unsigned char* q_lds, int request) {
        const unsigned char* q = p.q + static_cast<long long>(request) * p.q_stride_b;
        for (int c = hip_minimal::thread_x(); c < kNextN * kHeads * kChunksPerRow; c += kThreads) {
            const Int32x4 value = *reinterpret_cast<const Int32x4*>(q + c * 16);  // rows of one request are dense
            *reinterpret_cast<Int32x4*>(q_lds + mqa::swizzled_offset(c / kChunksPerRow, c % kChunksPerRow, kHeadDim)) =
                to_mfma_format<Op>(value);
        }
    }

    __device__ __forceinline__ static void fetch(const PagedMqaLogitsParams& p, Staged& staged, int request, int block) {
        const unsigned char* source = cache_block(p, request, block);
        const int thread = hip_minimal::thread_x();
        #pragma unroll
        for (int i = 0; i < kKeyChunksPerThread; ++i) {
            const int c = thread + i * kThreads;  // keys are token-major and dense: chunk c is byte 16 c
            staged.keys[i] = source != nullptr ? *reinterpret_cast<const Int32x4*>(source + c * 16) : Int32x4{0, 0, 0, 0};
        }
        staged.scales = source != nullptr && thread < kScaleChunks
                            ? *reinterpret_cast<const Int32x4*>(source + kKeyBytes + thread * 16)
                            : Int32x4{0, 0, 0, 0};
    }

    __device__ __forceinline__ static void store(const Staged& staged, unsigned char* buffer) {
        const int thread = hip_minimal::thread_x();
        #pragma unroll
        for (int i = 0; i < kKeyChunksPerThread; ++i) {
            const int c = thread + i * kThreads;
            *reinterpret_cast<Int32x4*>(buffer + mqa::swizzled_offset(c / kChunksPerRow, c % kChunksPerRow, kHeadDim)) =
                to_mfma_format<Op>(staged.keys[i]);
        }
        if (thread < kScaleChunks) *reinterpret_cast<Int32x4*>(buffer + kKeyBytes + thread * 16) = staged.scales;
    }

    __device__ __forceinline__ static void hold(const PagedMqaLogitsParams& p, const unsigned char* q_lds, int request,
                                                int token, int lane, HeldToken& held) {
        const int group = lane / kM;
        const long long row = static_cast<long long>(request) * kNextN + token;
        #pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
            const int q_row = token * kHeads + mt * kM + lane % kM;
            #pragma unroll
            for (int s = 0; s < kSteps; ++s) held.q[mt][s] = load_operand<Operand, kM, kK, kHeadDim>(q_lds, q_row, s, group);
            #pragma unroll
            for (int a = 0; a < kAccumulators; ++a) {
                const int head = mt * kM + accumulator_row(kM, lane, a);
                held.weights[mt][a] = p.weights[row * p.weights_stride + head] * kProductScale;
            }
        }
        held.token = token;
        held.visible = visible_keys(p, request, token);
        held.row = p.logits + row * p.logits_stride;
    }

    // The held token against key columns [nt M, nt M + M) of the cache block in `buffer`, which is
    // block `block` of the request: writes the scaled (or -inf) logits.
    __device__ __forceinline__ static void compute_pair(const PagedMqaLogitsParams& p, const unsigned char* buffer,
                                                        int block, int nt, int lane, const HeldToken& held) {
        const int group = lane / kM;
        const int slot = nt * kM + lane % kM;
        Accumulator acc[kMTiles];
        #pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) acc[mt] = Accumulator{};
        #pragma unroll
        for (int s = 0; s < kSteps; ++s) {
            const Operand keys = load_operand<Operand, kM, kK, kHeadDim>(buffer, slot, s, group);
            #pragma unroll
            for (int mt = 0; mt < kMTiles; ++mt) acc[mt] = Op::run(held.q[mt][s], keys, acc[mt]);
        }
        float sum = 0.0f;
        #pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
            #pragma unroll
            for (int a = 0; a < kAccumulators; ++a) sum += held.weights[mt][a] * __builtin_fmaxf(acc[mt][a], 0.0f);
        }
        // Lanes with the same key column hold the other heads: 2 (M = 32) or 4 (M = 16) groups.
        sum += hip_minimal::shuffle_xor(sum, 32);
        if constexpr (kM == 16) sum += hip_minimal::shuffle_xor(sum, 16);

        const int col = block * kBlockKv + slot;
        if (lane < kM && col < p.max_context_len) {
            const float scale = reinterpret_cast<const float*>(buffer + kKeyBytes)[slot];
            const bool masked = p.clean_logits && col >= held.visible;
            held.row[col] = masked ? hip_minimal::negative_infinity() : sum * scale;
        }
    }

    // -inf for this workgroup's share of the columns past the request's computed blocks.
    __device__ static void fill_tail(const PagedMqaLogitsParams& p, int request, int tail_begin, int split, int splits) {
        const int step = splits * kThreads;
        for (int t = 0; t < kNextN; ++t) {
            float* row = p.logits + (static_cast<long long>(request) * kNextN + t) * p.logits_stride;
            for (int c = first_tail_column(tail_begin, split, kThreads, hip_minimal::thread_x()); c < p.max_context_len;
                 c += step)
                row[c] = hip_minimal::negative_infinity();
        }
    }

    __device__ static void run(const PagedMqaLogitsParams& p) {
        extern __shared__ __attribute__((aligned(16))) unsigned char shared[];
        // NOTES: a launch with another shape would read and write out of bounds; the host checks it,
        // and this stops the kernel loudly if it ever does not.
        if (p.heads != kHeads || p.head_dim != kHeadDim || p.next_n != kNextN || p.block_kv != kBlockKv) __builtin_trap();

        const int request = hip_minimal::block_x();
        if (request >= p.batch) return;  // uniform across the workgroup
        const int split = hip_minimal::block_y();
        const int splits = hip_minimal::grid_blocks_y();
        const int wave = hip_minimal::thread_x() / 64;
        const int lane = hip_minimal::thread_x() % 64;
        unsigned char* q_lds = shared;
        unsigned char* buffers = shared + kQBytes;

        const SplitWork work = split_work(p, request, split, splits);
        const int first_block = work.blocks.begin;
        const int num_blocks = work.blocks.end - work.blocks.begin;

        Staged staged;
        const auto fetch_block = [&](int block) { fetch(p, staged, request, first_block + block); };
        const auto store_block = [&](int buffer) { store(staged, buffers + buffer * kBufferBytes); };
        if (num_blocks > 0) {
            load_q(p, q_lds, request);
            StagedRing<kBuffers>::prime(num_blocks, fetch_block, store_block);
        }
        if (p.clean_logits) fill_tail(p, request, work.tail_begin, split, splits);
        if (num_blocks == 0) return;  // uniform across the workgroup

        HeldToken held;
        StagedRing<kBuffers>::run(num_blocks, fetch_block, store_block, [&](int block, int buffer) {
            #pragma unroll 1
            for (int i = 0; i < kPairsPerWave; ++i) {
                const int pair = wave * kPairsPerWave + i;
                const int token = pair / kNTiles;
                if (token != held.token) hold(p, q_lds, request, token, lane, held);  // uniform across the wave
                compute_pair(p, buffers + buffer * kBufferBytes, first_block + block, pair % kNTiles, lane, held);
            }
        });
    }
};

}  // namespace mqa_gfx9_paged

// Defines `extern "C" __global__ void NAME(PagedMqaLogitsParams p)`, launched with grid (batch,
// splits), WAVES * 64 threads and paged_lds_bytes(...) of dynamic LDS.
#define MQA_GFX9_PAGED_KERNEL(NAME, HEADS, HEAD_DIM, M, K, BLOCK_KV, NEXT_N, WAVES, BUFFERS)                  \
    extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size((WAVES) * 64, (WAVES) * 64)))      \
        NAME(PagedMqaLogitsParams p) {                                                                        \
        mqa_gfx9_paged::PagedMfmaKernel<HEADS, HEAD_DIM, M, K, BLOCK_KV, NEXT_N, WAVES, BUFFERS>::run(p);     \
    }

#endif  // __HIP_DEVICE_COMPILE__
