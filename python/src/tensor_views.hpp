#pragma once
// A tensor as it crosses from Python: a (data_ptr, dtype, shape, strides) tuple, strides in
// elements (torch's Tensor.stride()), dtype spelled as mqajit::to_string(DType) spells it.

#include <pybind11/pybind11.h>

#include "mqajit/tensor.hpp"

namespace mqajit::python {

// Throws mqajit::Error(invalid_argument) naming `name` when the tuple is malformed or the dtype
// is not one mqajit has; the library checks everything else (rank, sizes, strides, alignment).
TensorView tensor_view_from(const char* name, pybind11::handle view);

}  // namespace mqajit::python
