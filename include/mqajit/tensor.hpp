#pragma once
// A non-owning view of a device tensor: pointer, element type, shape and strides (in elements).

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "mqajit/export.hpp"

namespace mqajit {

enum class DType { float8_e4m3, float32, int32, bfloat16, uint8 };

MQAJIT_API std::string to_string(DType dtype);
MQAJIT_API std::int64_t element_size_bytes(DType dtype);

struct MQAJIT_API TensorView {
    static constexpr int kMaxRank = 4;

    void* data = nullptr;
    DType dtype = DType::float32;
    int rank = 0;
    std::array<std::int64_t, kMaxRank> shape{};
    std::array<std::int64_t, kMaxRank> strides{};  // in elements, not bytes

    // A densely packed (row-major) view.
    static TensorView contiguous(const void* data, DType dtype, std::initializer_list<std::int64_t> shape);
    // A view with explicit strides (in elements).
    static TensorView strided(const void* data, DType dtype, std::initializer_list<std::int64_t> shape,
                              std::initializer_list<std::int64_t> strides);

    std::int64_t size(int dim) const { return shape.at(static_cast<std::size_t>(dim)); }
    std::int64_t stride(int dim) const { return strides.at(static_cast<std::size_t>(dim)); }
    std::string describe() const;  // e.g. "float8_e4m3[4096, 32, 128] strides [4096, 128, 1]"
};

}  // namespace mqajit
