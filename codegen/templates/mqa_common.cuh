#pragma once
// Helpers shared by the mqa_logits device templates: e4m3 decoding, the 128B shared-memory swizzle,
// KV-window clamping, the split of a CTA's KV range into computed tiles and -inf fill, and a few
// sm_80 PTX wrappers (cp.async, ldmatrix).
//
// Compiled three ways: by nvcc, by NVRTC (no standard or CCCL headers: built-in types and inline PTX
// only) and as plain host C++ by the unit tests, which check the index math on the CPU. Everything
// outside the `#if defined(__CUDACC__)` block is therefore host-and-device code.

#if defined(__CUDACC__)
#define MQA_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define MQA_HOST_DEVICE inline
#endif

namespace mqa {

// ---- integer helpers ----------------------------------------------------------------------------

MQA_HOST_DEVICE constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }
MQA_HOST_DEVICE constexpr int min_int(int a, int b) { return a < b ? a : b; }
MQA_HOST_DEVICE constexpr int max_int(int a, int b) { return a > b ? a : b; }

// ---- e4m3 (e4m3fn: bias 7, no infinities, 0x7f / 0xff are NaN, largest finite 448) --------------

// Exact decode with integer arithmetic only, so the reference kernel depends on no conversion
// instruction: |x| * 2^10 is an integer below 2^19, which a float holds exactly.
MQA_HOST_DEVICE float e4m3_to_float(unsigned bits) {
    const unsigned exponent = (bits >> 3) & 0xFu;
    const unsigned mantissa = bits & 0x7u;
    if (exponent == 0xFu && mantissa == 0x7u) {
#if defined(__CUDA_ARCH__)
        return __int_as_float(0x7FC00000);  // NVRTC has no __builtin_nanf
#else
        return __builtin_nanf("");
#endif
    }
    const unsigned scaled = exponent == 0 ? (mantissa << 1) : ((8u + mantissa) << exponent);
    const float magnitude = static_cast<float>(scaled) * (1.0f / 1024.0f);
    return (bits & 0x80u) ? -magnitude : magnitude;
}

// Two e4m3 bytes -> the f16x2 bit pattern of (value * 2^-8), exactly. Lanes: `lo` byte of `bits`
// selected by `byte_lo`, into the low half; `byte_hi` into the high half.
// NOTES: moving the 7 magnitude bits of an e4m3 into f16's exponent/mantissa fields (shift by 7) keeps
// the mantissa and re-biases the exponent from 7 to 15, i.e. multiplies by 2^-8; e4m3 subnormals land
// on f16 subnormals with the same ratio. No f16 rounding happens, so the result is exact. NaN inputs
// (0x7f, 0xff) become +-480 * 2^-8: finite. Callers multiply the final fp32 sums by 2^16 (2^-8 from
// each operand) instead of rescaling every f16 value.
MQA_HOST_DEVICE unsigned e4m3x2_to_f16x2_scaled(unsigned bits, int byte_lo, int byte_hi) {
    const unsigned lo = (bits >> (8 * byte_lo)) & 0xFFu;
    const unsigned hi = (bits >> (8 * byte_hi)) & 0xFFu;
    const unsigned spread = (lo << 8) | (hi << 24);  // each byte at the top of its 16-bit half
    return (spread & 0x80008000u) | ((spread >> 1) & 0x3F803F80u);
}
inline constexpr float kF16ScaledProductCorrection = 65536.0f;  // 2^16 = 1 / (2^-8 * 2^-8)

// ---- bfloat16 -------------------------------------------------------------------------------------

// The bfloat16 bit pattern of `value`, rounded to nearest even; NaN stays a (quiet) NaN.
MQA_HOST_DEVICE unsigned short float_to_bf16_bits(float value) {
    unsigned bits;
#if defined(__CUDA_ARCH__)
    bits = __float_as_uint(value);
#else
    __builtin_memcpy(&bits, &value, sizeof bits);
#endif
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<unsigned short>((bits >> 16) | 0x40u);
    bits += 0x7FFFu + ((bits >> 16) & 1u);
    return static_cast<unsigned short>(bits >> 16);
}

// ---- KV windows -----------------------------------------------------------------------------------

// A half-open column range [begin, end); empty when end <= begin.
struct Range {
    int begin;
    int end;
    MQA_HOST_DEVICE constexpr bool empty() const { return end <= begin; }
};

// Row i's window [cu_starts[i], cu_ends[i]) clamped to [0, N); an inverted window becomes empty.
MQA_HOST_DEVICE Range clamp_window(int start, int end, int num_kv) {
    const int begin = min_int(max_int(start, 0), num_kv);
    const int clamped_end = min_int(max_int(end, 0), num_kv);
    return Range{begin, max_int(begin, clamped_end)};
}

// The smallest range covering two windows; an empty window contributes nothing.
MQA_HOST_DEVICE Range window_union(Range a, Range b) {
    if (a.empty()) return b;
    if (b.empty()) return a;
    return Range{min_int(a.begin, b.begin), max_int(a.end, b.end)};
}

// ---- a CTA's share of the KV axis ----------------------------------------------------------------
//
// [0, N) is cut into tiles of `block_kv` columns; KV split y owns tiles [y*T, min((y+1)*T, tiles)) with
// T = ceil(tiles / num_splits). Of those, a CTA computes only the tiles meeting the union of its rows'
// windows; with clean logits it writes -inf to the rest of its split's columns. Every column of
// [0, N) thus belongs to exactly one split, and inside a split to either a computed tile or the fill.

struct KvWork {
    Range split_tiles;     // tiles this KV split owns
    Range computed_tiles;  // subset of split_tiles that meets the rows' windows (maybe empty)
    Range fill_before;     // columns of the split before the computed tiles (only -inf there)
    Range fill_after;      // columns of the split after the computed tiles
};

MQA_HOST_DEVICE Range split_tile_range(int num_tiles, int num_splits, int split) {
    const int per_split = ceil_div(num_tiles, num_splits);
    const int begin = min_int(split * per_split, num_tiles);
    return Range{begin, min_int(begin + per_split, num_tiles)};
}

// `rows_window` is the union of the CTA's (valid) rows' clamped windows.
MQA_HOST_DEVICE KvWork plan_kv_work(int num_kv, int block_kv, int num_splits, int split, Range rows_window) {
    KvWork work;
    work.split_tiles = split_tile_range(ceil_div(num_kv, block_kv), num_splits, split);
    int first = work.split_tiles.begin;
    int last = work.split_tiles.begin;  // empty unless the window meets the split
    if (!rows_window.empty()) {
        first = max_int(work.split_tiles.begin, rows_window.begin / block_kv);
        last = min_int(work.split_tiles.end, ceil_div(rows_window.end, block_kv));
        if (last <= first) first = last = work.split_tiles.begin;
    }
    work.computed_tiles = Range{first, last};
    const int split_end_column = min_int(work.split_tiles.end * block_kv, num_kv);
    work.fill_before = Range{work.split_tiles.begin * block_kv, first * block_kv};
    work.fill_after = Range{min_int(last * block_kv, split_end_column), split_end_column};
    if (first == last) {  // nothing computed: the whole split is fill
        work.fill_before = Range{work.split_tiles.begin * block_kv, split_end_column};
        work.fill_after = Range{split_end_column, split_end_column};
    }
    return work;
}

// ---- 128B swizzle ---------------------------------------------------------------------------------

// Byte offset of 16-byte chunk `chunk` of row `row` in a tile of `row_bytes`-byte rows (a multiple
// of 16), XOR-swizzled as TMA's 128B mode does: the linear offset's 128-byte line picks the XOR for
// the chunk index inside that line.
// NOTES: eight consecutive rows at one logical chunk then hit eight different 16-byte bank groups for
// rows of 64 or 128 bytes, so ldmatrix and cp.async are conflict-free.
MQA_HOST_DEVICE constexpr int swizzled_offset(int row, int chunk, int row_bytes) {
    const int linear = row * row_bytes + chunk * 16;
    const int line = linear >> 7;
    const int chunk_in_line = (linear >> 4) & 7;
    return (line << 7) | ((chunk_in_line ^ (line & 7)) << 4);
}

}  // namespace mqa

#if defined(__CUDACC__)

namespace mqa {

__device__ __forceinline__ float negative_infinity() { return __int_as_float(0xFF800000); }

__device__ __forceinline__ unsigned shared_address(const void* pointer) {
    return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

// ---- cp.async (sm_80+) ---------------------------------------------------------------------------

// 16 bytes global -> shared; with `valid` false nothing is read and the destination becomes zeros.
// NOTES: .cg skips L1: each byte is read once per CTA, so L1 would only evict more useful lines.
__device__ __forceinline__ void copy_16_bytes_async(unsigned destination, const void* source, bool valid) {
    const int source_bytes = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(destination), "l"(source),
                 "r"(source_bytes)
                 : "memory");
}

__device__ __forceinline__ void commit_async_copies() { asm volatile("cp.async.commit_group;" ::: "memory"); }

// Waits until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void wait_async_copies() {
    asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}

// ---- ldmatrix (sm_75+) ---------------------------------------------------------------------------

// Four 8x8 b16 matrices: lanes 8m..8m+7 give the row addresses of matrix m; register m of lane L
// receives bytes [4*(L%4), 4*(L%4)+4) of row L/4 of matrix m.
__device__ __forceinline__ void load_matrix_x4(unsigned (&registers)[4], unsigned address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(registers[0]), "=r"(registers[1]), "=r"(registers[2]), "=r"(registers[3])
                 : "r"(address));
}

}  // namespace mqa

#endif  // __CUDACC__
