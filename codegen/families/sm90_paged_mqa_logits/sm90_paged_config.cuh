#pragma once
// The decode kernel's compile-time configuration (one per variant) and its shared-memory layout.

#include "sm90_primitives.cuh"

namespace mqa_sm90_paged {

using mqa_sm90::u32;
using mqa_sm90::u64;

constexpr int min_constexpr(int a, int b) { return a < b ? a : b; }

template <int kHeads_, int kHeadDim_, int kBlockKv_, int kNextN_, int kMathGroups_, int kStages_,
          int kBlocksPerSm_ = 1>
struct PagedConfig {
    static constexpr int kHeads = kHeads_;
    static constexpr int kHeadDim = kHeadDim_;
    static constexpr int kBlockKv = kBlockKv_;  // tokens per cache block = keys per stage
    static constexpr int kNextN = kNextN_;
    static constexpr int kMathGroups = kMathGroups_;
    static constexpr int kStages = kStages_;
    static constexpr int kBlocksPerSm = kBlocksPerSm_;  // CTAs resident per SM (launch bounds)

    static constexpr int kN = kNextN * kHeads;  // the wgmma N side: (token, head)
    // The quad reduction works on 1, 2 or 4 rows; three tokens reduce as four with an empty one.
    static constexpr int kReduceRows = kNextN == 3 ? 4 : kNextN;
    static constexpr int kMTiles = kBlockKv / 64;
    static constexpr int kNBlocks = kN / 8;
    static constexpr int kThreads = (kMathGroups + 1) * 128;

    static constexpr u32 kKeyStageBytes = kBlockKv * kHeadDim;
    static constexpr u32 kScaleStageBytes = kBlockKv * 4;
    static constexpr u32 kQBufferBytes = kN * kHeadDim;
    static constexpr int kQBuffers = 2;
    static constexpr u32 kBarrierBytes = 8 * (2 * kStages + 2 * kQBuffers);
    static constexpr u32 kScheduleBytes = 4 * (kThreads + 4);
    // NOTES: +1024 so the key ring and Q buffers can start on a 1024-byte boundary (128B swizzle).
    static constexpr u32 kSharedBytes = 1024 + kStages * kKeyStageBytes + kQBuffers * kQBufferBytes +
                                        kStages * kScaleStageBytes + kBarrierBytes + kScheduleBytes;

    // Register split (setmaxnreg): the entry allocation is what launch bounds leave each thread;
    // the producer warpgroup gives most of its share to the math warpgroups.
    static constexpr int kEntryRegisters = (65536 / (kThreads * kBlocksPerSm)) / 8 * 8;
    static constexpr int kProducerRegisters = kEntryRegisters >= 160 ? 40 : 24;
    static constexpr int kMathRegisters =
        min_constexpr(232, ((kEntryRegisters * (kMathGroups + 1) - kProducerRegisters) / kMathGroups) / 8 * 8);
    // NOTES: with three or four math warpgroups the launch bound leaves 128 or 96 registers a
    // thread, and setmaxnreg there makes ptxas spill (84 B at 512 threads, CUDA 13.0) although the
    // math path fits the entry allotment without it (75 registers at N = 64): only two reallocate.
    static constexpr bool kReallocates = kMathGroups == 2 && kEntryRegisters < 232;
    static constexpr int kMathThreadRegisters = kReallocates ? kMathRegisters : min_constexpr(255, kEntryRegisters);

    static_assert(kHeadDim == 64 || kHeadDim == 128, "head_dim 64 or 128");
    static_assert(kBlockKv == 64 || kBlockKv == 128, "block_kv 64 or 128");
    static_assert(kNextN >= 1 && kNextN <= 4, "next_n 1 to 4");
    static_assert(kHeads % 8 == 0 && kN % 32 == 0 && kN <= 256, "next_n x heads must be a multiple of 32 up to 256");
    static_assert(kMathGroups >= 1 && kMathGroups <= 4, "1 to 4 math warpgroups (a producer warp each)");
    static_assert(kBlocksPerSm == 1 || kBlocksPerSm == 2, "one or two CTAs per SM");
    static_assert(kMathThreadRegisters >= kMTiles * kN / 2 + kN / 4 + 24, "too few registers for the accumulators and weights");
    static_assert(kStages % kMathGroups == 0, "each stage must always serve the same math warpgroup");
    static_assert(kMTiles * kN / 2 <= 128, "accumulators per thread must stay within 128 registers");
};

struct SharedLayout {
    unsigned char* key_tiles;
    unsigned char* q_tiles;
    float* scales;
    u64* kv_full;
    u64* kv_empty;
    u64* q_full;
    u64* q_empty;
    int* schedule;
};

template <class C>
__device__ __forceinline__ SharedLayout carve_shared(unsigned char* raw) {
    const u32 misalignment = mqa_sm90::shared_address(raw) & 1023u;
    unsigned char* base = raw + (misalignment == 0 ? 0 : 1024 - misalignment);
    SharedLayout layout;
    layout.key_tiles = base;
    layout.q_tiles = base + C::kStages * C::kKeyStageBytes;
    layout.scales = reinterpret_cast<float*>(layout.q_tiles + C::kQBuffers * C::kQBufferBytes);
    u64* barriers = reinterpret_cast<u64*>(layout.scales + C::kStages * C::kBlockKv);
    layout.kv_full = barriers;
    layout.kv_empty = barriers + C::kStages;
    layout.q_full = barriers + 2 * C::kStages;
    layout.q_empty = barriers + 2 * C::kStages + C::kQBuffers;
    layout.schedule = reinterpret_cast<int*>(barriers + 2 * C::kStages + 2 * C::kQBuffers);
    return layout;
}

}  // namespace mqa_sm90_paged
