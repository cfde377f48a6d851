#pragma once
// The parts of the extension module mqajit._mqajit, one concern per file; module.cpp calls each.
// The binding converts and forwards: every rule about the arguments lives in the library.

#include <pybind11/pybind11.h>

#include "mqajit/error.hpp"

namespace mqajit::python {

void bind_errors(pybind11::module_& module);      // mqajit::Error -> ValueError / RuntimeError
void bind_status(pybind11::module_& module);      // runtime_status(), device_info(), version
void bind_mqa_logits(pybind11::module_& module);  // mqa_logits(), mqa_logits_reference()
void bind_paged_mqa_logits(pybind11::module_& module);  // paged_mqa_logits() and its reference
void bind_mqa_topk(pybind11::module_& module);     // mqa_topk() and its workspace sizes
void bind_tuning(pybind11::module_& module);      // lookup(), explain()
void bind_torch_hooks(pybind11::module_& module);  // what the fast call takes from torch
void bind_fast_call(pybind11::module_& module);   // mqa_logits() on torch tensors, one crossing
void bind_paged_fast_call(pybind11::module_& module);  // paged_mqa_logits() on torch tensors, one crossing

// Sets the Python exception an mqajit::Error becomes (ValueError or RuntimeError, with `kind`).
void raise_python_error(const Error& error);

}  // namespace mqajit::python
