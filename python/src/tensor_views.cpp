#include "python/src/tensor_views.hpp"

#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/check.hpp"

namespace mqajit::python {
namespace {

namespace py = pybind11;

constexpr DType kAllDTypes[] = {DType::float8_e4m3, DType::float32, DType::int32, DType::bfloat16, DType::uint8};

// What each tensor the bindings take must hold, for the message on a dtype mqajit has no name for.
std::string_view expected_dtype(std::string_view name) {
    static constexpr std::pair<std::string_view, std::string_view> kExpected[] = {
        {"q", "float8_e4m3 (torch.float8_e4m3fn)"}, {"kv", "float8_e4m3 (torch.float8_e4m3fn)"},
        {"kv_scales", "float32"}, {"weights", "float32"}, {"cu_starts", "int32"}, {"cu_ends", "int32"},
        {"logits", "float32 (mqa_logits: or bfloat16)"}, {"indices", "int32"}, {"values", "float32"},
        {"workspace", "uint8"}, {"kv_cache", "uint8"}, {"context_lens", "int32"}, {"block_table", "int32"}};
    for (const auto& [tensor, dtype] : kExpected) {
        if (tensor == name) return dtype;
    }
    return {};
}

DType dtype_from(const char* name, const std::string& text) {
    for (DType dtype : kAllDTypes) {
        if (to_string(dtype) == text) return dtype;
    }
    const std::string_view expected = expected_dtype(name);
    MQAJIT_CHECK(expected.empty(), "{} has dtype {}; it must be {}", name, text, expected);
    MQAJIT_FAIL(invalid_argument, "{} has dtype {}, which mqajit does not take", name, text);
}

std::string repr_text(py::handle object) { return py::repr(object).cast<std::string>(); }

}  // namespace

TensorView tensor_view_from(const char* name, py::handle view) {
    MQAJIT_CHECK(py::isinstance<py::tuple>(view) && py::len(view) == 4,
                 "{} must be a (data_ptr, dtype, shape, strides) tuple, not {}; mqajit.mqa_logits makes them "
                 "from torch tensors", name, repr_text(view));
    const auto items = py::reinterpret_borrow<py::tuple>(view);
    std::uintptr_t address = 0;
    std::string dtype_text;
    std::vector<std::int64_t> shape, strides;
    try {
        address = items[0].cast<std::uintptr_t>();
        dtype_text = items[1].cast<std::string>();
        shape = items[2].cast<std::vector<std::int64_t>>();
        strides = items[3].cast<std::vector<std::int64_t>>();
    } catch (const py::cast_error&) {
        MQAJIT_FAIL(invalid_argument,
                    "{} is {}: expected (data_ptr: int, dtype: str, shape: tuple of int, strides: tuple of int)",
                    name, repr_text(view));
    }
    MQAJIT_CHECK(shape.size() <= TensorView::kMaxRank, "{} has {} dimensions; mqajit's tensors have at most {}",
                 name, shape.size(), TensorView::kMaxRank);
    MQAJIT_CHECK(shape.size() == strides.size(), "{} has {} sizes but {} strides", name, shape.size(),
                 strides.size());

    TensorView tensor;
    tensor.data = reinterpret_cast<void*>(address);
    tensor.dtype = dtype_from(name, dtype_text);
    tensor.rank = static_cast<int>(shape.size());
    std::copy(shape.begin(), shape.end(), tensor.shape.begin());
    std::copy(strides.begin(), strides.end(), tensor.strides.begin());
    return tensor;
}

}  // namespace mqajit::python
