// paged_mqa_logits arguments: make_paged_mqa_logits_args() either refuses a call with mqajit::Error
// or returns kernel parameters the decode kernels can run with. Sizes and strides come from the
// input, extreme ones included (the checks themselves must not overflow). For an accepted call:
// the parameters are the views' own, the logits rows do not overlap and hold every column a token
// may write, the block table has a column for every cache block a request may need, and the
// grid's schedule counts fit the kernels' 32-bit arithmetic.

#include <algorithm>
#include <cstdint>

#include "fuzz/fuzz_support.hpp"
#include "mqajit/error.hpp"
#include "runtime/paged_mqa_logits_args.hpp"
#include "runtime/tensor_checks.hpp"

using namespace mqajit;

namespace {

// A size near `usual`, or one far from it (wrapping: `usual` may itself be anything).
std::int64_t size_near(fuzz::ByteReader& in, std::int64_t usual) {
    const auto plus = [usual](std::uint64_t delta) {
        return static_cast<std::int64_t>(static_cast<std::uint64_t>(usual) + delta);
    };
    switch (in.next(1) % 8) {
        case 0: return in.next_int64();  // anything, negative included
        case 1: return plus(~std::uint64_t{0});  // usual - 1
        case 2: return plus(in.next(1));
        default: return usual;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::scratch();  // quiet logging
    fuzz::ByteReader in(data, size);
    const std::int64_t b = 1 + static_cast<std::int64_t>(in.next(2) % 4096);
    const std::int64_t next_n = static_cast<std::int64_t>(in.next(1) % 6);
    const std::int64_t h = in.pick<std::int64_t>({32, 64, 64, 32, 48});
    const std::int64_t d = in.pick<std::int64_t>({128, 128, 64, 96});
    const std::int64_t block_kv = in.pick<std::int64_t>({64, 64, 128, 32});
    const std::int64_t num_blocks = 1 + static_cast<std::int64_t>(in.next(3) % (1 << 20));
    const std::int64_t max_context_len = in.next(1) % 16 == 0 ? static_cast<std::int64_t>(in.next(4))
                                                              : 1 + static_cast<std::int64_t>(in.next(3) % 300000);
    const std::int64_t needed_columns = (max_context_len + block_kv - 1) / block_kv;
    const std::int64_t max_blocks = size_near(in, needed_columns);
    const bool lens_2d = in.next(1) & 1;
    const bool clean = in.next(1) & 1;
    const std::uintptr_t misaligned = in.next(1) % 16 == 0 ? in.next(1) % 16 : 0;

    const std::int64_t q_stride = size_near(in, next_n * h * d);
    const std::int64_t cache_stride = size_near(in, block_kv * (d + 4));
    const std::int64_t weights_stride = size_near(in, h);
    const std::int64_t lens_stride = size_near(in, next_n);
    const std::int64_t table_stride = in.next(1) % 8 == 0 ? 0 : size_near(in, max_blocks);  // 0: one row for all
    const std::int64_t logits_stride = size_near(in, max_context_len);

    PagedMqaLogitsArgs args;
    try {
        const TensorView q = TensorView::strided(fuzz::fake_address(1, misaligned), DType::float8_e4m3,
                                                 {b, next_n, h, d}, {q_stride, h * d, d, 1});
        const TensorView cache = TensorView::strided(fuzz::fake_address(2), DType::uint8,
                                                     {num_blocks, block_kv, 1, d + 4}, {cache_stride, d + 4, d + 4, 1});
        const TensorView weights =
            TensorView::strided(fuzz::fake_address(3), DType::float32, {b * next_n, h}, {weights_stride, 1});
        const TensorView lens =
            lens_2d ? TensorView::strided(fuzz::fake_address(4), DType::int32, {b, next_n}, {lens_stride, 1})
                    : TensorView::contiguous(fuzz::fake_address(4), DType::int32, {b});
        const TensorView table =
            TensorView::strided(fuzz::fake_address(5), DType::int32, {b, max_blocks}, {table_stride, 1});
        const TensorView logits = TensorView::strided(fuzz::fake_address(6, misaligned & 4), DType::float32,
                                                      {b * next_n, max_context_len}, {logits_stride, 1});
        args = make_paged_mqa_logits_args(q, cache, weights, lens, table, logits, clean);
    } catch (const Error&) {
        return 0;
    }

    const PagedMqaLogitsParams& p = args.params;
    // The stride of a size-1 dimension is taken as dense (it addresses nothing).
    const auto stride_of = [](std::int64_t size, std::int64_t stride, std::int64_t dense) {
        return size == 1 ? dense : stride;
    };
    MQAJIT_FUZZ_EXPECT(p.batch == b && p.next_n == next_n && p.heads == h && p.head_dim == d);
    MQAJIT_FUZZ_EXPECT(p.block_kv == block_kv && p.max_context_len == max_context_len);
    MQAJIT_FUZZ_EXPECT(p.max_blocks == max_blocks && p.block_table_stride == stride_of(b, table_stride, max_blocks));
    MQAJIT_FUZZ_EXPECT(p.logits_stride == stride_of(b * next_n, logits_stride, max_context_len));
    MQAJIT_FUZZ_EXPECT(p.q_stride_b == stride_of(b, q_stride, next_n * h * d));
    MQAJIT_FUZZ_EXPECT(p.cache_block_bytes == stride_of(num_blocks, cache_stride, block_kv * (d + 4)));
    MQAJIT_FUZZ_EXPECT(p.context_lens_2d == (lens_2d ? 1 : 0));
    MQAJIT_FUZZ_EXPECT(next_n >= 1 && next_n <= 4);
    // Rows of logits do not overlap and each holds every column a token may see.
    MQAJIT_FUZZ_EXPECT(p.logits_stride >= p.max_context_len);
    // A request may need ceil(max_context_len / block_kv) cache blocks: the table has them.
    MQAJIT_FUZZ_EXPECT(static_cast<std::int64_t>(p.max_blocks) >= needed_columns);
    // The schedule counts every request's blocks with 32-bit integers.
    MQAJIT_FUZZ_EXPECT(std::int64_t{p.batch} * std::max<std::int64_t>(1, needed_columns) <= kMaxIndex);
    // TMA needs 16-byte aligned bases and strides for Q and the cache.
    MQAJIT_FUZZ_EXPECT(p.q_stride_b % 16 == 0 && p.cache_block_bytes % 16 == 0);
    MQAJIT_FUZZ_EXPECT(reinterpret_cast<std::uintptr_t>(p.q) % 16 == 0);
    MQAJIT_FUZZ_EXPECT(p.num_cache_blocks >= 1 && p.num_cache_blocks <= num_blocks);
    return 0;
}
