// mqa_topk()'s argument checks and workspace sizes: they run before anything launches (or touches
// a device), so they are tested without a GPU.

#include <doctest/doctest.h>

#include <string>

#include "mqajit/error.hpp"
#include "mqajit/mqa_topk.hpp"
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

TEST_CASE("mqa_topk: workspace sizes are whole rows of 16-byte aligned float32 logits") {
    CHECK(mqa_topk_row_bytes(1) == 16);
    CHECK(mqa_topk_row_bytes(100) == 400);
    CHECK(mqa_topk_row_bytes(101) == 416);
    // As many rows as fit, at least one, at most S.
    CHECK(mqa_topk_workspace_bytes(4096, 32768) == 4096 * 32768 * 4);  // 512 MiB holds all 4096 rows
    CHECK(mqa_topk_workspace_bytes(8192, 32768) == 4096 * 32768 * 4);
    CHECK(mqa_topk_workspace_bytes(10, 100, 1000) == 2 * 400);
    CHECK(mqa_topk_workspace_bytes(10, 100, 1) == 400);
    CHECK(mqa_topk_workspace_bytes(4096, 1 << 20, std::int64_t{512} << 20) == 128 * (std::int64_t{4} << 20));
    CHECK_THROWS_AS(mqa_topk_workspace_bytes(0, 100), Error);
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
