#pragma once
// What the gfx9 fp8 MFMA kernels share (gfx9_mqa_logits.cuh for prefill, gfx9_paged_mqa_logits.cuh
// for decode): the device environment, the e4m3fn -> e4m3fnuz conversion gfx942 needs, the MFMA
// instructions of gfx942 (32x32x16 / 16x16x32, e4m3fnuz) and gfx950 (scaled 32x32x64 / 16x16x128,
// e4m3fn), their operand and accumulator lane layouts, the operand load from a swizzled LDS row and
// the register-staged LDS ring of tiles.
//
// The part outside `#if defined(__HIP_DEVICE_COMPILE__)` is host code too: the unit tests check the
// conversion and the lane layouts on the CPU.

#include "hip_minimal.cuh"
#include "mqa_device_common.cuh"

#if defined(__HIP_DEVICE_COMPILE__)
#define MQA_GFX9_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define MQA_GFX9_HOST_DEVICE inline
#endif

namespace mqa_gfx9 {

// ---- e4m3fn -> e4m3fnuz (gfx942) -----------------------------------------------------------------
// e4m3fn: bias 7, 0x80 is -0, 0x7f/0xff are NaN. e4m3fnuz (gfx942's fp8): bias 8, 0x80 is the only
// NaN, no -0, no infinity. The same bits therefore mean exactly half the value in fnuz, for every
// finite fn code (subnormals included), and fnuz has no code for fn's NaNs nor a need for -0.
// NOTES: so each byte keeps its bits, except -0 -> +0 (0x80 would read as NaN) and the NaNs -> 0x80;
// every product of two converted operands is then a quarter of the true one, which the kernel undoes
// by multiplying the head weights by 4 (relu commutes with a positive scale). No rounding anywhere.
inline constexpr float kFnuzProductCorrection = 4.0f;

MQA_GFX9_HOST_DEVICE constexpr unsigned e4m3fn_to_fnuz(unsigned byte) {
    const unsigned magnitude = byte & 0x7Fu;
    if (magnitude == 0x7Fu) return 0x80u;  // NaN stays NaN
    if (magnitude == 0u) return 0u;        // +-0 -> +0
    return byte & 0xFFu;
}

// The same on four bytes at once (SWAR), as the kernel converts one 32-bit word per step.
MQA_GFX9_HOST_DEVICE constexpr unsigned e4m3fn_to_fnuz_x4(unsigned word) {
    const unsigned magnitude = word & 0x7F7F7F7Fu;
    // Per byte, magnitude <= 0x7f, so neither sum carries into the next byte.
    const unsigned nonzero = (magnitude + 0x7F7F7F7Fu) & 0x80808080u;    // 0x80 where magnitude != 0
    const unsigned nan = (magnitude + 0x01010101u) & 0x80808080u;        // 0x80 where magnitude == 0x7f
    const unsigned keep_top = nonzero & ~nan;
    const unsigned keep = keep_top | (keep_top - (keep_top >> 7));      // 0x80 -> 0xff per byte
    return (word & keep) | nan;
}

// ---- MFMA shape constants (host-visible for tests) -----------------------------------------------

// Bytes of A (and of B) each lane supplies per MFMA: M x K fp8 values over 64 lanes.
MQA_GFX9_HOST_DEVICE constexpr int operand_bytes_per_lane(int m, int k) { return m * k / 64; }
// First byte of d that lane group `group` (lane / M) supplies for MFMA step `step` (d in steps of K);
// it supplies operand_bytes_per_lane(m, k) bytes from there, for A (Q) and B (KV) alike.
MQA_GFX9_HOST_DEVICE constexpr int operand_first_byte(int m, int k, int step, int group) {
    return step * k + group * operand_bytes_per_lane(m, k);
}
// f32 accumulators per lane: M x M over 64 lanes.
MQA_GFX9_HOST_DEVICE constexpr int accumulators_per_lane(int m) { return m * m / 64; }

// Row (head within the M tile) of accumulator `a` of lane `lane` in an MxM f32 MFMA result; the
// column (KV within the tile) is lane % M. (CDNA3/CDNA4 ISA guides, "dependency table" layouts.)
MQA_GFX9_HOST_DEVICE constexpr int accumulator_row(int m, int lane, int a) {
    return m == 32 ? 8 * (a / 4) + 4 * (lane / 32) + (a % 4) : 4 * (lane / 16) + a;
}

}  // namespace mqa_gfx9

#if defined(__HIP_DEVICE_COMPILE__)

namespace mqa_gfx9 {

typedef int Int32x4 __attribute__((ext_vector_type(4)));
typedef int Int32x8 __attribute__((ext_vector_type(8)));
typedef float Float32x4 __attribute__((ext_vector_type(4)));
typedef float Float32x16 __attribute__((ext_vector_type(16)));

// One MFMA: kM x kM results, kK deep. Operand: this lane's operand_bytes_per_lane(kM, kK) of A (or B).
template <int kM, int kK>
struct Mfma;

#if defined(__gfx950__)
// NOTES: format 0 is fp8 e4m3fn for both operands; scale 127 is 2^0 in E8M0, so the scaled MFMA
// computes the plain product.
inline constexpr int kFp8Format = 0;
inline constexpr int kIdentityScale = 127;
template <>
struct Mfma<32, 64> {
    using Operand = Int32x8;
    using Accumulator = Float32x16;
    static constexpr bool kFnuz = false;
    __device__ __forceinline__ static Accumulator run(Operand a, Operand b, Accumulator c) {
        return __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(a, b, c, kFp8Format, kFp8Format, 0, kIdentityScale,
                                                                0, kIdentityScale);
    }
};
template <>
struct Mfma<16, 128> {
    using Operand = Int32x8;
    using Accumulator = Float32x4;
    static constexpr bool kFnuz = false;
    __device__ __forceinline__ static Accumulator run(Operand a, Operand b, Accumulator c) {
        return __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(a, b, c, kFp8Format, kFp8Format, 0, kIdentityScale,
                                                                 0, kIdentityScale);
    }
};
#endif  // __gfx950__

#if defined(__gfx942__)
template <>
struct Mfma<32, 16> {
    using Operand = long;
    using Accumulator = Float32x16;
    static constexpr bool kFnuz = true;
    __device__ __forceinline__ static Accumulator run(Operand a, Operand b, Accumulator c) {
        return __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(a, b, c, 0, 0, 0);
    }
};
template <>
struct Mfma<16, 32> {
    using Operand = long;
    using Accumulator = Float32x4;
    static constexpr bool kFnuz = true;
    __device__ __forceinline__ static Accumulator run(Operand a, Operand b, Accumulator c) {
        return __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a, b, c, 0, 0, 0);
    }
};
#endif  // __gfx942__

// Loads this lane's operand for LDS row `row` (D bytes, swizzled), K step `step`, lane group `group`.
// NOTES: A and B of these MFMAs share one lane layout (lane = row + M * k-group, bytes in k order),
// so giving both the same bytes of d for the same (group, slot) pairs every Q byte with the KV byte
// of the same d: the dot product is right whatever order the hardware sums the K slots in.
template <typename Operand, int kM, int kK, int kHeadDim>
__device__ __forceinline__ Operand load_operand(const unsigned char* lds, int row, int step, int group) {
    constexpr int kBytes = operand_bytes_per_lane(kM, kK);
    const int byte = operand_first_byte(kM, kK, step, group);
    if constexpr (kBytes == 32) {
        const Int32x4 low =
            *reinterpret_cast<const Int32x4*>(lds + mqa::swizzled_offset(row, byte / 16, kHeadDim));
        const Int32x4 high =
            *reinterpret_cast<const Int32x4*>(lds + mqa::swizzled_offset(row, byte / 16 + 1, kHeadDim));
        return Operand{low.x, low.y, low.z, low.w, high.x, high.y, high.z, high.w};
    } else {
        static_assert(kBytes == 8, "fp8 MFMA operands are 8 or 32 bytes per lane");
        return *reinterpret_cast<const long*>(lds + mqa::swizzled_offset(row, byte / 16, kHeadDim) + byte % 16);
    }
}

// A 16-byte chunk of e4m3fn bytes as the MFMA of `Op` reads them (e4m3fnuz on gfx942).
template <class Op>
__device__ __forceinline__ Int32x4 to_mfma_format(Int32x4 chunk) {
    if constexpr (Op::kFnuz) {
        return Int32x4{static_cast<int>(e4m3fn_to_fnuz_x4(static_cast<unsigned>(chunk.x))),
                       static_cast<int>(e4m3fn_to_fnuz_x4(static_cast<unsigned>(chunk.y))),
                       static_cast<int>(e4m3fn_to_fnuz_x4(static_cast<unsigned>(chunk.z))),
                       static_cast<int>(e4m3fn_to_fnuz_x4(static_cast<unsigned>(chunk.w)))};
    } else {
        return chunk;
    }
}

// The register-staged LDS ring both gfx9 kernels run over their tiles (KV tiles, cache blocks):
// prime(...) fills buffers 0..S-2; then for each tile t the global loads of tile t + S - 1 go to
// registers (fetch) while tile t is computed from buffer t % S, and land in buffer (t - 1) % S
// (store), which every wave finished with before this tile's barrier. One barrier per tile.
template <int kBuffers>
struct StagedRing {
    static_assert(kBuffers >= 2, "the register stage needs a second LDS buffer to write into");

    template <class Fetch, class Store>
    __device__ __forceinline__ static void prime(int num_tiles, Fetch&& fetch, Store&& store) {
        #pragma unroll
        for (int b = 0; b + 1 < kBuffers; ++b) {
            if (b < num_tiles) {
                fetch(b);
                store(b);
            }
        }
    }

    template <class Fetch, class Store, class Compute>
    __device__ __forceinline__ static void run(int num_tiles, Fetch&& fetch, Store&& store, Compute&& compute) {
        #pragma unroll 1
        for (int t = 0; t < num_tiles; ++t) {
            const int ahead = t + kBuffers - 1;
            if (ahead < num_tiles) fetch(ahead);
            hip_minimal::sync_threads();
            compute(t, t % kBuffers);
            if (ahead < num_tiles) store(ahead % kBuffers);
        }
    }
};

}  // namespace mqa_gfx9

#endif  // __HIP_DEVICE_COMPILE__
