// mqa_topk()'s argument checks and workspace sizes: they run before anything launches (or touches
// a device), so they are tested without a GPU.

#include <doctest/doctest.h>

#include <string>

#include "mqajit/error.hpp"
#include "mqajit/mqa_topk.hpp"
#include "runtime/mqa_topk_layout.hpp"
#include "runtime/mqa_topk_path.hpp"
#include "tests/fake_operands.hpp"

using namespace mqajit;

namespace {

constexpr auto fake = testing::fake_device_address;

struct Args : testing::FakeMqaOperands {
    TensorView indices = TensorView::contiguous(fake(7), DType::int32, {4, 16});
    TensorView values = TensorView::contiguous(fake(8), DType::float32, {4, 16});
    TensorView workspace = TensorView::contiguous(fake(9), DType::uint8, {400});
};

std::string error_of(const Args& a, ErrorKind* kind = nullptr) {
    try {
        mqa_topk(a.q, a.kv, a.kv_scales, a.weights, a.cu_starts, a.cu_ends, a.indices, a.values, a.workspace);
    } catch (const Error& e) {
        if (kind) *kind = e.kind();
        return e.what();
    }
    return "";
}

void check_rejected(const Args& a, const std::string& fragment) {
    ErrorKind kind{};
    const std::string message = error_of(a, &kind);
    INFO(message);
    CHECK(kind == ErrorKind::invalid_argument);
    CHECK(message.find(fragment) != std::string::npos);
}

// One change to a valid call, and what the message must say about it.
struct Rejection {
    void (*change)(Args&);
    const char* fragment;
};

}  // namespace

TEST_CASE("mqa_topk: workspace sizes are the fused path's fixed part and whole rows of float32 logits") {
    CHECK(mqa_topk_row_bytes(1) == 16);
    CHECK(mqa_topk_row_bytes(100) == 400);
    CHECK(mqa_topk_row_bytes(101) == 416);
    const std::int64_t mib = std::int64_t{1} << 20;
    // The fixed part: 2.5 k candidate slots of 8 bytes per row dominate it.
    const FusedTopkLayout layout = fused_topk_layout(4096, 32768, 2048);
    CHECK(layout.capacity == 5120);
    CHECK(layout.sample_stride == 33);  // k / 64, odd
    CHECK(layout.sample_len == (32768 + 32) / 33);
    CHECK(layout.logits >= 4096 * 5120 * 8);
    CHECK(layout.logits < 4096 * 5120 * 8 + mib);
    CHECK(fused_topk_layout(10, 100, 1).capacity == 1024);
    CHECK(fused_topk_layout(10, 100, 1).sample_stride == 1);
    // The fixed part, then as many rows as fit in what is left, at least one, at most S.
    const std::int64_t rows_left = (512 * mib - layout.logits) / (32768 * 4);
    CHECK(mqa_topk_workspace_bytes(4096, 32768, 2048) == layout.logits + rows_left * 32768 * 4);
    CHECK(mqa_topk_workspace_bytes(10, 100, 16, 1 << 30) == fused_topk_layout(10, 100, 16).logits + 10 * 400);
    // Without room for the fixed part: the unfused path's whole rows.
    CHECK(mqa_topk_workspace_bytes(10, 100, 16, 1000) == 2 * 400);
    CHECK(mqa_topk_workspace_bytes(10, 100, 16, 1) == 400);
    CHECK_THROWS_AS(mqa_topk_workspace_bytes(0, 100, 16), Error);
    CHECK_THROWS_AS(mqa_topk_workspace_bytes(10, 100, 0), Error);
    CHECK_THROWS_AS(mqa_topk_workspace_bytes(10, 100, kMqaTopkMaxK + 1), Error);
    CHECK_THROWS_AS(mqa_topk_row_bytes(0), Error);
}

TEST_CASE("mqa_topk: bad arguments are rejected before launch, saying what is wrong") {
    const Rejection rejections[] = {
        {[](Args& a) { a.indices = TensorView::contiguous(fake(7), DType::float32, {4, 16}); },
         "indices has dtype float32"},
        {[](Args& a) {
             a.indices = TensorView::contiguous(fake(7), DType::int32, {4, 4097});
             a.values.data = nullptr;
         },
         "at most 4096 keys"},
        {[](Args& a) { a.indices = TensorView::contiguous(fake(7), DType::int32, {3, 16}); }, "S from q"},
        {[](Args& a) { a.indices = TensorView::strided(fake(7), DType::int32, {4, 16}, {8, 1}); }, "row stride >= k"},
        {[](Args& a) { a.values = TensorView::contiguous(fake(8), DType::float32, {4, 15}); }, "k from indices"},
        {[](Args& a) { a.workspace = TensorView::contiguous(fake(9), DType::uint8, {399}); },
         "one row of logits over N = 100 keys needs 400"},
        {[](Args& a) { a.workspace.data = static_cast<char*>(fake(9)) + 4; }, "16-byte boundary"},
        {[](Args& a) { a.indices.data = static_cast<char*>(fake(7)) + 1; }, "indices must be 4-byte aligned"},
        {[](Args& a) { a.values.data = a.indices.data; }, "values (float32[4, 16] strides [16, 1]) overlaps indices"},
        {[](Args& a) { a.workspace.data = a.q.data; }, "workspace (uint8[400] strides [1]) overlaps q"},
        {[](Args& a) { a.indices.data = a.cu_ends.data; }, "indices (int32[4, 16] strides [16, 1]) overlaps cu_ends"},
        {[](Args& a) { a.values.data = static_cast<char*>(fake(8)) + 2; }, "values must be 4-byte aligned"},
        {[](Args& a) { a.indices = TensorView::contiguous(nullptr, DType::int32, {4, 0}); },
         "dimension 1 is empty"},
        {[](Args& a) { a.workspace = TensorView::contiguous(fake(9), DType::float32, {100}); },
         "workspace has dtype float32"},
        // The scores' operands are checked as mqa_logits checks them.
        {[](Args& a) { a.weights = TensorView::contiguous(fake(4), DType::float32, {4, 64}); }, "weights"},
        {[](Args& a) { a.cu_ends = TensorView::contiguous(fake(6), DType::int32, {5}); }, "cu_ends"},
        {[](Args& a) { a.q = TensorView::contiguous(fake(1), DType::float32, {4, 32, 128}); }, "q has dtype float32"},
    };
    for (const Rejection& rejection : rejections) {
        Args a;
        rejection.change(a);
        check_rejected(a, rejection.fragment);
    }
}

TEST_CASE("mqa_topk: paths are spelled auto, fused and unfused") {
    CHECK(parse_mqa_topk_path("auto") == MqaTopkPath::automatic);
    CHECK(parse_mqa_topk_path("fused") == MqaTopkPath::fused);
    CHECK(parse_mqa_topk_path("unfused") == MqaTopkPath::unfused);
    CHECK_THROWS_WITH_AS(parse_mqa_topk_path("fast"), doctest::Contains("path is 'fast'; pass 'auto'"), Error);
}

TEST_CASE("mqa_topk: the path rule takes the fused path where its twin exists, the workspace fits and N is long") {
    const Variant wgmma = Variant::parse("wgmma64x256x32_bkv64_r8_w2_lds4");
    const std::int64_t roomy = mqa_topk_workspace_bytes(4096, 1048576, 2048);
    const TopkPathQuery long_rows{.logits_variant = wgmma, .requested = MqaTopkPath::automatic, .seq_len = 4096,
                                  .seq_len_kv = 1048576, .k = 2048, .workspace_bytes = roomy};
    const TopkPathDecision fused = decide_topk_path(long_rows);
    CHECK(fused.fused);
    REQUIRE(fused.topk_variant.has_value());
    CHECK(fused.topk_variant->name() == "twgmma64x256x32_bkv64_r8_w2_lds4");

    TopkPathQuery query = long_rows;
    query.seq_len_kv = 65536;  // past 10 candidate buffers (51200 keys): fused
    query.workspace_bytes = mqa_topk_workspace_bytes(4096, 65536, 2048);
    CHECK(decide_topk_path(query).fused);
    query.seq_len_kv = 32768;  // within them: the unfused path
    query.workspace_bytes = mqa_topk_workspace_bytes(4096, 32768, 2048);
    CHECK_FALSE(decide_topk_path(query).fused);
    query.requested = MqaTopkPath::fused;
    CHECK(decide_topk_path(query).fused);

    query = long_rows;
    query.requested = MqaTopkPath::unfused;
    CHECK_FALSE(decide_topk_path(query).fused);

    // What makes it unavailable: the unfused path on automatic, an error naming it when asked for.
    const auto unavailable = [&](TopkPathQuery q, const char* fragment) {
        CAPTURE(fragment);
        const TopkPathDecision automatic = decide_topk_path(q);
        CHECK_FALSE(automatic.fused);
        CHECK(automatic.reason.find(fragment) != std::string::npos);
        q.requested = MqaTopkPath::fused;
        CHECK_THROWS_WITH_AS(decide_topk_path(q), doctest::Contains(fragment), Error);
    };
    query = long_rows;
    query.workspace_bytes = 32768 * 4;
    unavailable(query, "workspace holds");
    query = long_rows;
    query.logits_variant = Variant::parse("mma16x8x32_bkv64_r4_w4");
    unavailable(query, "no fused top-k kernel");
    query = long_rows;
    query.logits_variant.reset();
    unavailable(query, "no fused top-k kernel");
    query = long_rows;
    query.kv_rows_aligned = false;
    unavailable(query, "16-byte");
}

TEST_CASE("mqa_topk: inputs lying past a small workspace are no overlap (the [S, N] scores view is not written)") {
    // The workspace holds one row; the whole [S, N] view the checks see would reach the inputs.
    Args a;
    a.workspace = TensorView::contiguous(static_cast<char*>(fake(1)) - 400, DType::uint8, {400});  // ends at q
    ErrorKind kind{};
    const std::string message = error_of(a, &kind);
    INFO(message);
    CHECK(message.find("overlaps") == std::string::npos);
    CHECK(kind != ErrorKind::invalid_argument);
}

TEST_CASE("mqa_topk: a workspace of 2 GiB or more, as mqa_topk_workspace_bytes() gives, passes the checks") {
    // S = 4096 over 2^20 keys with 8 GiB offered: the size is past int32, and every use of it is int64.
    const std::int64_t bytes = mqa_topk_workspace_bytes(4096, std::int64_t{1} << 20, 2048, std::int64_t{8} << 30);
    REQUIRE(bytes > std::int64_t{1} << 31);
    Args a;
    a.workspace = TensorView::contiguous(fake(9), DType::uint8, {bytes});
    ErrorKind kind{};
    const std::string message = error_of(a, &kind);
    INFO(message);
    // Past the checks the call needs a device, which this test does not have (or runs on fake addresses).
    CHECK(message.find("workspace") == std::string::npos);
    CHECK(kind != ErrorKind::invalid_argument);
}
