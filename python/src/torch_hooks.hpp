#pragma once
// What the fast call needs from torch, handed over by python/mqajit/_torch_hooks.py so that the
// extension neither links nor imports torch: torch's dtype objects, torch.empty_strided, a device
// object per ordinal, getters of the current device and of a device's current stream, and the
// torch reader (python/torch_reader/) where one was built for the torch in use.

#include <Python.h>
#include <pybind11/pybind11.h>

#include <optional>

#include "mqajit/tensor.hpp"
#include "python/src/bindings.hpp"
#include "python/src/owned.hpp"
#include "python/src/torch_reader_api.hpp"

namespace mqajit::python {

struct TorchHooks {
    // Borrowed from the hooks object, which the cache keeps alive. A dtype torch lacks is None.
    PyObject* float8_e4m3fn = nullptr;
    PyObject* float32 = nullptr;
    PyObject* int32 = nullptr;
    PyObject* bfloat16 = nullptr;
    PyObject* uint8 = nullptr;
    PyObject* empty_strided = nullptr;       // torch.empty_strided
    PyObject* current_device = nullptr;      // () -> int: the current CUDA ordinal
    PyObject* current_raw_stream = nullptr;  // (ordinal) -> int: that device's current CUstream
    PyObject* device = nullptr;              // (ordinal) -> torch.device("cuda", ordinal)
    // mqajit._mqajit_torch's functions, where it was built for the torch in use; else nullptr.
    const TorchReader* reader = nullptr;
};

// The hooks, loaded through the Python loader on first use, copied into `hooks`; `keep_alive`
// holds the object they borrow from, so hooks installed meanwhile by another thread cannot free
// them. False, with no Python error set, when they cannot be had (no torch here): the caller
// takes the checked path, which says why.
bool torch_hooks(TorchHooks& hooks, Owned& keep_alive);

std::optional<DType> dtype_of(const TorchHooks& hooks, PyObject* dtype);  // nullopt: not one of mqajit's
PyObject* dtype_object(const TorchHooks& hooks, DType dtype);          // borrowed
// torch.device("cuda", ordinal), made once per ordinal. Empty, with no Python error set, when it
// cannot be made (or the ordinal is past the cache): the caller takes the checked path.
Owned device_object(const TorchHooks& hooks, long ordinal);

}  // namespace mqajit::python
