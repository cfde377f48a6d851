// mqajit._mqajit: the C++ half of the Python package. It needs no torch: the fast call reads
// tensors through the CPython API (fast_call.cpp), and the checked path hands over
// (data_ptr, dtype, shape, strides) tuples that python/mqajit/_views.py makes from torch tensors.

#include "python/src/bindings.hpp"

#include "mqajit/version.hpp"

PYBIND11_MODULE(_mqajit, module) {
    module.doc() = "mqajit's C++ binding; use the mqajit package, which wraps it for torch tensors";
    module.attr("__version__") = mqajit::kVersion;
    mqajit::python::bind_errors(module);
    mqajit::python::bind_status(module);
    mqajit::python::bind_mqa_logits(module);
    mqajit::python::bind_paged_mqa_logits(module);
    mqajit::python::bind_mqa_topk(module);
    mqajit::python::bind_tuning(module);
    mqajit::python::bind_torch_hooks(module);
    mqajit::python::bind_fast_call(module);
    mqajit::python::bind_paged_fast_call(module);
}
