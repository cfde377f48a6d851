#include "mqajit/tensor.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <span>

#include "core/check.hpp"

namespace mqajit {

std::string to_string(DType dtype) {
    switch (dtype) {
        case DType::float8_e4m3: return "float8_e4m3";
        case DType::float32: return "float32";
        case DType::int32: return "int32";
        case DType::bfloat16: return "bfloat16";
        case DType::uint8: return "uint8";
    }
    return "unknown";
}

std::int64_t element_size_bytes(DType dtype) {
    switch (dtype) {
        case DType::float8_e4m3:
        case DType::uint8: return 1;
        case DType::bfloat16: return 2;
        case DType::float32:
        case DType::int32: return 4;
    }
    return 4;
}

namespace {

TensorView shaped(const void* data, DType dtype, std::initializer_list<std::int64_t> shape) {
    MQAJIT_CHECK(shape.size() >= 1 && shape.size() <= TensorView::kMaxRank, "a tensor has 1 to {} dimensions, not {}",
                 TensorView::kMaxRank, shape.size());
    TensorView view;
    view.data = const_cast<void*>(data);
    view.dtype = dtype;
    view.rank = static_cast<int>(shape.size());
    std::copy(shape.begin(), shape.end(), view.shape.begin());
    return view;
}

}  // namespace

TensorView TensorView::contiguous(const void* data, DType dtype, std::initializer_list<std::int64_t> shape) {
    TensorView view = shaped(data, dtype, shape);
    std::int64_t stride = 1;
    for (int dim = view.rank - 1; dim >= 0; --dim) {
        view.strides[dim] = stride;
        if (dim > 0 && __builtin_mul_overflow(stride, view.shape[dim], &stride)) {
            MQAJIT_FAIL(invalid_argument,
                        "a contiguous tensor of shape [{}] has more elements than a 64-bit stride can step over; "
                        "pass the sizes of memory that exists",
                        fmt::join(std::span(view.shape.data(), static_cast<std::size_t>(view.rank)), ", "));
        }
    }
    return view;
}

TensorView TensorView::strided(const void* data, DType dtype, std::initializer_list<std::int64_t> shape,
                               std::initializer_list<std::int64_t> strides) {
    MQAJIT_CHECK(shape.size() == strides.size(), "shape has {} dimensions but strides has {}", shape.size(),
                 strides.size());
    TensorView view = shaped(data, dtype, shape);
    std::copy(strides.begin(), strides.end(), view.strides.begin());
    return view;
}

std::string TensorView::describe() const {
    // rank is a public field: a view with a rank no TensorView can have says so, and reads nothing past its arrays.
    if (rank < 0 || rank > kMaxRank) return fmt::format("{} view of rank {} (a TensorView has 0 to {} dimensions)",
                                                        to_string(dtype), rank, kMaxRank);
    auto dims = std::span(shape.data(), static_cast<std::size_t>(rank));
    auto steps = std::span(strides.data(), static_cast<std::size_t>(rank));
    return fmt::format("{}[{}] strides [{}]", to_string(dtype), fmt::join(dims, ", "), fmt::join(steps, ", "));
}

}  // namespace mqajit
