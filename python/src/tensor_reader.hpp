#pragma once
// Reads a torch tensor's metadata for the fast call: through the torch reader's C++ types where
// it is loaded (plain torch.Tensor only), else data_ptr(), dtype, shape, stride(), is_cuda and
// get_device() through the CPython API with interned names: no Python frame, no tuple of views,
// nothing imported. Duck-typed like python/mqajit/_views.py, so fakes stand in for tests.

#include <Python.h>

#include "mqajit/tensor.hpp"
#include "python/src/torch_hooks.hpp"

namespace mqajit::python {

struct CudaTensor {
    TensorView view;
    long device = -1;  // the CUDA ordinal
};

// True with `tensor` filled when `object` is a CUDA tensor of a dtype mqajit names and at most
// TensorView::kMaxRank dimensions. False, with no Python error set, for anything else (None, not
// a tensor, on another kind of device, an unknown dtype): the caller then takes the checked path,
// which raises the message that says what is wrong. Sizes, strides and alignment are the library's
// to check.
// `allow_uint8`: a uint8 tensor is read too (the paged KV cache); elsewhere uint8 goes to the
// checked path, which names it as packed FP4.
bool read_cuda_tensor(const TorchHooks& hooks, PyObject* object, CudaTensor& tensor, bool allow_uint8 = false);

// data_ptr() alone, for a tensor whose shape and strides the caller made; false (no error set) on failure.
bool read_data_ptr(PyObject* object, void*& data);

}  // namespace mqajit::python
