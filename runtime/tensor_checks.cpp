#include "runtime/tensor_checks.hpp"

#include "core/check.hpp"

namespace mqajit {

void check_tensor(const TensorView& t, const char* name, DType dtype, int rank, const char* layout) {
    MQAJIT_CHECK(t.data != nullptr, "{} is a null pointer; pass device memory holding {} {}", name, to_string(dtype),
                 layout);
    MQAJIT_CHECK(t.dtype == dtype, "{} has dtype {}; it must be {} {}", name, to_string(t.dtype), to_string(dtype),
                 layout);
    MQAJIT_CHECK(t.rank == rank, "{} has {} dimensions ({}); it must be {} {}", name, t.rank, t.describe(),
                 to_string(dtype), layout);
    for (int dim = 0; dim < rank; ++dim) {
        MQAJIT_CHECK(t.size(dim) >= 1 && t.size(dim) <= kMaxIndex, "{} dimension {} is {}; sizes must be 1 to {}",
                     name, dim, t.size(dim), kMaxIndex);
    }
}

void check_size(const TensorView& t, const char* name, int dim, std::int64_t expected, const char* what) {
    MQAJIT_CHECK(t.size(dim) == expected, "{} is {} but dimension {} must equal {} = {}", name, t.describe(), dim,
                 what, expected);
}

}  // namespace mqajit
