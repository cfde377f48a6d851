#pragma once
// The table of functions mqajit._mqajit_torch (python/torch_reader/) hands the fast call in a
// capsule: where the extension could be built against the interpreter's torch, tensors are read
// and logits allocated through torch's C++ types instead of Python attributes. Plain C types
// only, so that _mqajit itself needs no torch header.

#include <Python.h>

#include <cstdint>

namespace mqajit::python {

inline constexpr int kTorchReaderVersion = 1;
inline constexpr const char* kTorchReaderCapsuleName = "mqajit._mqajit_torch.reader";

struct TorchReader {
    int version;  // kTorchReaderVersion
    // 1 with the outputs filled when `object` is a plain torch.Tensor (or Parameter: no subclass)
    // on CUDA, strided, of a dtype mqajit has (dtype: a mqajit::DType value) and at most
    // `max_rank` dimensions; 0 otherwise (the caller reads it through Python). Never raises.
    int (*read)(PyObject* object, int max_rank, void** data, int* dtype, int* rank, std::int64_t* shape,
                std::int64_t* strides, long* device);
    // A new CUDA tensor of `dtype` (a mqajit::DType value: float32 or bfloat16), sizes
    // (rows, columns), strides (row_stride, 1), on `device`, with its data pointer in `data`;
    // nullptr with torch's Python exception set when torch cannot make it (out of memory).
    PyObject* (*empty)(std::int64_t rows, std::int64_t columns, std::int64_t row_stride, int dtype, long device,
                       void** data);
};

}  // namespace mqajit::python
