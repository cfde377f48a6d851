// paged_mqa_logits argument checks run before anything launches, so they are tested without a GPU.

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "mqajit/error.hpp"
#include "runtime/paged_mqa_logits_args.hpp"

using namespace mqajit;

namespace {

// Distinct, 256-byte aligned fake device addresses: nothing is dereferenced by the checks.
void* fake(std::uintptr_t slot) { return reinterpret_cast<void*>(0x100000 + slot * 0x10000); }
// Fake addresses 16 TiB apart, for views too large to lie 64 KiB apart without overlapping.
void* far(std::uintptr_t slot) { return reinterpret_cast<void*>(slot << 44); }

// B = 3 requests of next_n = 2 tokens, H = 64, D = 128, 10 cache blocks of 64 tokens.
struct Args {
    TensorView q = TensorView::contiguous(fake(1), DType::float8_e4m3, {3, 2, 64, 128});
    TensorView kv_cache = TensorView::contiguous(fake(2), DType::uint8, {10, 64, 1, 132});
    TensorView weights = TensorView::contiguous(fake(3), DType::float32, {6, 64});
    TensorView context_lens = TensorView::contiguous(fake(4), DType::int32, {3, 2});
    TensorView block_table = TensorView::contiguous(fake(5), DType::int32, {3, 4});
    TensorView logits = TensorView::strided(fake(6), DType::float32, {6, 250}, {256, 1});
    bool clean = false;

    PagedMqaLogitsArgs make() const {
        return make_paged_mqa_logits_args(q, kv_cache, weights, context_lens, block_table, logits, clean);
    }
};

std::string error_of(const Args& a, ErrorKind* kind = nullptr) {
    try {
        a.make();
    } catch (const Error& e) {
        if (kind) *kind = e.kind();
        return e.what();
    }
    return "";
}

bool rejected(const Args& a, const std::string& part, ErrorKind expected = ErrorKind::invalid_argument) {
    ErrorKind kind{};
    const std::string message = error_of(a, &kind);
    if (message.find(part) == std::string::npos || kind != expected) {
        MESSAGE("expected an error containing '", part, "', got '", message, "'");
        return false;
    }
    return true;
}

}  // namespace

TEST_CASE("paged_mqa_logits args: a valid call fills the kernel argument") {
    Args a;
    const PagedMqaLogitsArgs args = a.make();
    CHECK(args.shape.batch == 3);
    CHECK(args.shape.next_n == 2);
    CHECK(args.shape.heads == 64);
    CHECK(args.shape.head_dim == 128);
    CHECK(args.shape.block_kv == 64);
    CHECK(args.shape.max_context_len == 250);
    CHECK(args.shape.num_cache_blocks == 10);
    CHECK(args.shape.context_lens_2d);
    const PagedMqaLogitsParams& p = args.params;
    CHECK(p.q == fake(1));
    CHECK(p.kv_cache == fake(2));
    CHECK(p.logits == fake(6));
    CHECK(p.q_stride_b == 2 * 64 * 128);
    CHECK(p.weights_stride == 64);
    CHECK(p.context_lens_stride == 2);
    CHECK(p.block_table_stride == 4);
    CHECK(p.logits_stride == 256);
    CHECK(p.cache_block_bytes == 64 * 132);
    CHECK(p.max_blocks == 4);
    CHECK(p.max_context_len == 250);
    CHECK(p.context_lens_2d == 1);
    CHECK(p.clean_logits == 0);
    CHECK(p.num_cache_blocks == 10);

    a.context_lens = TensorView::contiguous(fake(4), DType::int32, {3});
    a.clean = true;
    const PagedMqaLogitsArgs one_d = a.make();
    CHECK_FALSE(one_d.shape.context_lens_2d);
    CHECK(one_d.params.context_lens_2d == 0);
    CHECK(one_d.params.clean_logits == 1);
}

TEST_CASE("paged_mqa_logits args: supported sizes, and unsupported ones named") {
    for (int next_n : {1, 2, 3, 4}) {
        Args a;
        a.q = TensorView::contiguous(fake(1), DType::float8_e4m3, {3, next_n, 64, 128});
        a.weights = TensorView::contiguous(fake(3), DType::float32, {3 * next_n, 64});
        a.context_lens = TensorView::contiguous(fake(4), DType::int32, {3, next_n});
        a.logits = TensorView::contiguous(fake(6), DType::float32, {3 * next_n, 250});
        CHECK_NOTHROW(a.make());
    }
    Args five;
    five.q = TensorView::contiguous(fake(1), DType::float8_e4m3, {3, 5, 64, 128});
    five.weights = TensorView::contiguous(fake(3), DType::float32, {15, 64});
    five.context_lens = TensorView::contiguous(fake(4), DType::int32, {3, 5});
    five.logits = TensorView::contiguous(fake(6), DType::float32, {15, 250});
    CHECK(rejected(five, "next_n = 5", ErrorKind::unsupported));

    Args heads;
    heads.q = TensorView::contiguous(fake(1), DType::float8_e4m3, {3, 2, 16, 128});
    heads.weights = TensorView::contiguous(fake(3), DType::float32, {6, 16});
    CHECK(rejected(heads, "16 heads", ErrorKind::unsupported));

    Args block;
    block.kv_cache = TensorView::contiguous(fake(2), DType::uint8, {10, 32, 1, 132});
    block.block_table = TensorView::contiguous(fake(5), DType::int32, {3, 8});
    CHECK(rejected(block, "32 tokens per block", ErrorKind::unsupported));
}

TEST_CASE("paged_mqa_logits args: bad input is rejected with a message naming the problem") {
    Args a;
    a.q.dtype = DType::int32;
    CHECK(rejected(a, "q has dtype int32"));

    a = Args{};
    a.q = TensorView::contiguous(fake(1), DType::float8_e4m3, {6, 64, 128});
    CHECK(rejected(a, "q has 3 dimensions"));

    a = Args{};
    a.kv_cache = TensorView::contiguous(fake(2), DType::uint8, {10, 64, 1, 128});
    CHECK(rejected(a, "D + 4"));

    a = Args{};
    a.kv_cache = TensorView::contiguous(fake(2), DType::uint8, {10, 64, 2, 132});
    CHECK(rejected(a, "one KV head"));

    a = Args{};
    a.kv_cache = TensorView::strided(fake(2), DType::uint8, {10, 64, 1, 132}, {64 * 132 + 8, 132, 132, 1});
    CHECK(rejected(a, "multiple of 16 bytes"));

    a = Args{};
    a.weights = TensorView::contiguous(fake(3), DType::float32, {3, 64});
    CHECK(rejected(a, "B * next_n"));

    a = Args{};
    a.context_lens = TensorView::contiguous(fake(4), DType::int32, {3, 3});
    CHECK(rejected(a, "next_n from q"));

    a = Args{};
    a.context_lens = TensorView::contiguous(fake(4), DType::int32, {4});
    CHECK(rejected(a, "B from q"));

    a = Args{};
    a.block_table = TensorView::contiguous(fake(5), DType::int32, {3, 3});  // 192 keys < 250 columns
    CHECK(rejected(a, "fewer than max_context_len = 250"));

    a = Args{};
    a.logits = TensorView::strided(fake(6), DType::float32, {6, 250}, {200, 1});
    CHECK(rejected(a, "row stride >= max_context_len"));

    a = Args{};
    a.q = TensorView::strided(fake(1), DType::float8_e4m3, {3, 2, 64, 128}, {2 * 64 * 128, 64 * 128 + 16, 128, 1});
    CHECK(rejected(a, "dense [next_n, H, D]"));

    a = Args{};
    a.q.data = static_cast<char*>(fake(1)) + 8;
    CHECK(rejected(a, "16-byte boundaries"));

    a = Args{};
    a.block_table.data = nullptr;
    CHECK(rejected(a, "block_table is a null pointer"));

    // A row stride so large that rows x stride overflows 64 bits (found by fuzz_paged_mqa_logits_args),
    // and one whose view merely spans 2^62 bytes.
    a = Args{};
    a.logits = TensorView::strided(fake(6), DType::float32, {6, 250}, {std::int64_t{1} << 61, 1});
    CHECK(rejected(a, "logits is float32[6, 250] strides [2305843009213693952, 1]: its sizes and strides span "
                      "2^62 bytes"));
    a = Args{};
    a.block_table = TensorView::strided(fake(5), DType::int32, {3, 4}, {std::int64_t{1} << 61, 1});
    CHECK(rejected(a, "block_table is int32[3, 4]"));
    a = Args{};
    a.block_table = TensorView::strided(fake(5), DType::int32, {3, 4}, {std::numeric_limits<std::int64_t>::min(), 1});
    CHECK(rejected(a, "span 2^62 bytes or more"));
}

TEST_CASE("paged_mqa_logits args: a call whose cache blocks would overflow the kernel's 32-bit schedule is rejected") {
    // 65536 requests of up to 2^21 + 1 keys: 65536 x 32769 blocks of 64 tokens, just past 2^31 - 1.
    constexpr std::int64_t batch = 65536, max_context_len = (std::int64_t{1} << 21) + 1, blocks = 32769;
    Args a;
    a.q = TensorView::contiguous(far(1), DType::float8_e4m3, {batch, 1, 64, 128});
    a.weights = TensorView::contiguous(far(3), DType::float32, {batch, 64});
    a.context_lens = TensorView::contiguous(far(4), DType::int32, {batch});
    a.block_table = TensorView::contiguous(far(5), DType::int32, {batch, blocks});
    a.logits = TensorView::contiguous(far(6), DType::float32, {batch, max_context_len});
    CHECK(rejected(a, "need up to 2147549184 cache blocks"));

    a.logits = TensorView::contiguous(far(6), DType::float32, {batch, max_context_len - 1});  // 2^31 blocks exactly
    CHECK(rejected(a, "split the batch"));
    a.logits = TensorView::contiguous(far(6), DType::float32, {batch / 2, max_context_len - 1});
    a.q = TensorView::contiguous(far(1), DType::float8_e4m3, {batch / 2, 1, 64, 128});
    a.weights = TensorView::contiguous(far(3), DType::float32, {batch / 2, 64});
    a.context_lens = TensorView::contiguous(far(4), DType::int32, {batch / 2});
    a.block_table = TensorView::contiguous(far(5), DType::int32, {batch / 2, blocks});
    CHECK(error_of(a).empty());
}

TEST_CASE("paged_mqa_logits args: strides of size-1 dimensions are taken as dense, and the widest context is bounded") {
    // next_n = 1 from a [B, H, D] tensor unsqueezed: dimension 1's stride is whatever torch left.
    Args a;
    a.q = TensorView::strided(fake(1), DType::float8_e4m3, {3, 1, 64, 128}, {64 * 128, 1, 128, 1});
    a.weights = TensorView::contiguous(fake(3), DType::float32, {3, 64});
    a.context_lens = TensorView::strided(fake(4), DType::int32, {3, 1}, {1, 5});
    a.logits = TensorView::strided(fake(6), DType::float32, {3, 250}, {256, 1});
    const PagedMqaLogitsArgs args = a.make();
    CHECK(args.params.next_n == 1);
    CHECK(args.params.q_stride_b == 64 * 128);
    CHECK(args.params.context_lens_stride == 1);

    // 2-D context lens whose rows overlap: the message says so.
    a = Args{};
    a.context_lens = TensorView::strided(fake(4), DType::int32, {3, 2}, {1, 1});
    CHECK(rejected(a, "rows must not overlap (row stride >= next_n = 2)"));

    // The kernels round a context up to whole tiles in int32: a width within 255 of 2^31 is refused.
    constexpr std::int64_t widest = std::numeric_limits<std::int32_t>::max() - 255;
    a = Args{};
    a.q = TensorView::contiguous(far(1), DType::float8_e4m3, {1, 1, 64, 128});
    a.weights = TensorView::contiguous(far(3), DType::float32, {1, 64});
    a.context_lens = TensorView::contiguous(far(4), DType::int32, {1});
    a.block_table = TensorView::contiguous(far(5), DType::int32, {1, widest / 64 + 2});
    a.logits = TensorView::contiguous(far(6), DType::float32, {1, widest + 1});
    CHECK(rejected(a, "at most 2147483647 rows and 2147483392 columns"));
    a.logits = TensorView::contiguous(far(6), DType::float32, {1, widest});
    CHECK(error_of(a).empty());
}

TEST_CASE("paged_mqa_logits args: logits that overlap an input are refused") {
    Args a;
    a.logits = TensorView::strided(static_cast<char*>(fake(5)) + 16, DType::float32, {6, 250}, {256, 1});
    CHECK(rejected(a, "logits (float32[6, 250] strides [256, 1]) overlaps block_table"));
}
