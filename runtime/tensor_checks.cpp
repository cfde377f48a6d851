#include "runtime/tensor_checks.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "core/check.hpp"

namespace mqajit {

void check_present(const TensorView& t, const char* name, std::string_view dtype, std::string_view layout) {
    MQAJIT_CHECK(t.rank >= 0 && t.rank <= TensorView::kMaxRank, "{} has rank {}; a TensorView has 0 to {} dimensions",
                 name, t.rank, TensorView::kMaxRank);
    const bool empty = std::any_of(t.shape.begin(), t.shape.begin() + t.rank, [](std::int64_t size) { return size == 0; });
    MQAJIT_CHECK(t.data != nullptr || empty, "{} is a null pointer; pass device memory holding {} {}", name, dtype,
                 layout);
}

void check_sizes(const TensorView& t, const char* name, std::int64_t max_size) {
    for (int dim = 0; dim < t.rank; ++dim) {
        MQAJIT_CHECK(t.size(dim) != 0,
                     "{} is {}: dimension {} is empty; mqajit takes no empty problems (skip the call when there is "
                     "nothing to compute)",
                     name, t.describe(), dim);
        MQAJIT_CHECK(t.size(dim) >= 1 && t.size(dim) <= max_size, "{} dimension {} is {}; sizes must be 1 to {}",
                     name, dim, t.size(dim), max_size);
    }
}

void check_tensor(const TensorView& t, const char* name, DType dtype, int rank, const char* layout,
                  std::int64_t max_size) {
    check_present(t, name, to_string(dtype), layout);
    MQAJIT_CHECK(t.dtype == dtype, "{} has dtype {}; it must be {} {}", name, to_string(t.dtype), to_string(dtype),
                 layout);
    MQAJIT_CHECK(t.rank == rank, "{} has {} dimensions ({}); it must be {} {}", name, t.rank, t.describe(),
                 to_string(dtype), layout);
    check_sizes(t, name, max_size);
    check_addressable(t, name);
}

TensorView with_dense_unit_strides(TensorView t) {
    if (t.rank < 1 || t.rank > TensorView::kMaxRank) return t;  // check_tensor says what is wrong with it
    for (int dim = t.rank - 1; dim >= 0; --dim) {
        if (t.shape[dim] != 1) continue;
        std::int64_t dense = 1;
        if (dim + 1 < t.rank && __builtin_mul_overflow(t.strides[dim + 1], t.shape[dim + 1], &dense)) continue;
        t.strides[dim] = dense;
    }
    return t;
}

namespace {

// Sum over dimensions of (size - 1) x |stride|, in bytes: the distance from a view's first byte to
// its last but one element's size; none when it reaches 2^62 bytes.
std::optional<std::int64_t> span_bytes(const TensorView& t) {
    constexpr std::int64_t kLimit = std::int64_t{1} << 62;
    std::int64_t span = 0;
    for (int dim = 0; dim < t.rank; ++dim) {
        const std::int64_t stride = t.stride(dim);
        std::int64_t step = 0;
        if (stride == std::numeric_limits<std::int64_t>::min() ||
            __builtin_mul_overflow(t.size(dim) - 1, stride < 0 ? -stride : stride, &step) ||
            __builtin_add_overflow(span, step, &span) || span >= kLimit) {
            return std::nullopt;
        }
    }
    if (__builtin_mul_overflow(span, element_size_bytes(t.dtype), &span) || span >= kLimit) return std::nullopt;
    return span;
}

}  // namespace

void check_addressable(const TensorView& t, const char* name) {
    MQAJIT_CHECK(span_bytes(t).has_value(),
                 "{} is {}: its sizes and strides span 2^62 bytes or more; no memory is that large", name,
                 t.describe());
}

void check_no_overlap(const TensorView& output, const char* name,
                      std::initializer_list<std::pair<const TensorView*, const char*>> others) {
    // [first, last] byte of a checked view (its strides are not negative); none for absent values.
    const auto bytes_of = [](const TensorView& t) -> std::optional<std::pair<std::uintptr_t, std::uintptr_t>> {
        const auto span = span_bytes(t);
        if (t.data == nullptr || !span) return std::nullopt;
        const auto first = reinterpret_cast<std::uintptr_t>(t.data);
        return std::pair{first, first + static_cast<std::uintptr_t>(*span + element_size_bytes(t.dtype)) - 1};
    };
    const auto span = bytes_of(output);
    if (!span) return;
    for (const auto& [other, other_name] : others) {
        const auto other_span = bytes_of(*other);
        if (!other_span) continue;
        MQAJIT_CHECK(span->second < other_span->first || other_span->second < span->first,
                     "{} ({}) overlaps {} ({}) in memory: the call would overwrite what it reads or one output "
                     "the other; pass separate tensors",
                     name, output.describe(), other_name, other->describe());
    }
}

void check_size(const TensorView& t, const char* name, int dim, std::int64_t expected, const char* what) {
    MQAJIT_CHECK(t.size(dim) == expected, "{} is {} but dimension {} must equal {} = {}", name, t.describe(), dim,
                 what, expected);
}

}  // namespace mqajit
