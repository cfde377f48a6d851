// TensorView's constructors: what a view says, and sizes no memory could have refused as an Error
// (the fuzz target fuzz_paged_mqa_logits_args found a contiguous view's stride overflowing).

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "mqajit/error.hpp"
#include "mqajit/tensor.hpp"

using namespace mqajit;

TEST_CASE("tensor view: contiguous strides are the products of the later sizes") {
    const TensorView view = TensorView::contiguous(nullptr, DType::float32, {3, 5, 7});
    CHECK(view.rank == 3);
    CHECK(view.stride(0) == 35);
    CHECK(view.stride(1) == 7);
    CHECK(view.stride(2) == 1);
    CHECK(view.describe() == "float32[3, 5, 7] strides [35, 7, 1]");
}

TEST_CASE("tensor view: a contiguous shape whose strides overflow 64 bits is an Error, not undefined behaviour") {
    const std::int64_t huge = std::int64_t{1} << 40;
    try {
        (void)TensorView::contiguous(nullptr, DType::uint8, {2, huge, huge});
        FAIL("no error for a shape of 2^81 elements");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::invalid_argument);
        CHECK(std::string(e.what()).find("[2, 1099511627776, 1099511627776]") != std::string::npos);
    }
    // The outermost size is never multiplied into a stride, so it may be anything.
    const TensorView wide =
        TensorView::contiguous(nullptr, DType::uint8, {std::numeric_limits<std::int64_t>::max(), 4});
    CHECK(wide.stride(0) == 4);
}

TEST_CASE("tensor view: strided views keep the caller's strides whatever the sizes") {
    const std::int64_t huge = std::int64_t{1} << 40;
    const TensorView view = TensorView::strided(nullptr, DType::int32, {huge, huge, huge}, {0, 0, 1});
    CHECK(view.stride(0) == 0);
    CHECK(view.stride(1) == 0);
    CHECK(view.stride(2) == 1);
    CHECK_THROWS_AS(TensorView::strided(nullptr, DType::int32, {2, 3}, {1}), Error);
}
