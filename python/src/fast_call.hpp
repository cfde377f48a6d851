#pragma once
// One mqa_logits call on torch tensors, with its arguments already bound to names: read the
// tensors (tensor_reader: torch's C++ types where the torch reader is loaded, else Python
// attributes), allocate the logits (the reader, else torch.empty_strided), take the current
// stream, run the library with the GIL released. Anything the fast path does not take as it is (a missing
// or CPU tensor, tensors on a device that is not the current one, a report that is not a dict...)
// goes to the checked path, python/mqajit/_checked.py, which raises the message that says what is
// wrong or, where the call is valid, makes it the long way.

#include <Python.h>

#include <cstdint>

namespace mqajit::python {

struct BoundCall {
    PyObject* function_name = nullptr;  // a str, for the checked path's messages
    bool reference = false;             // the fp32 reference kernel instead of mqa_logits()
    bool skip_library = false;          // everything but the library call, for python/benchmarks/host_time.py
    // q, kv, kv_scales, weights, cu_starts, cu_ends; nullptr: not given. All borrowed.
    PyObject* tensors[6] = {};
    PyObject* clean_logits = Py_True;
    PyObject* out = Py_None;
    PyObject* max_seqlen_k = nullptr;  // nullptr: 0
    PyObject* logits_dtype = Py_None;
    PyObject* variant = Py_None;
    PyObject* report = Py_None;
};

// The logits (a new reference), or nullptr with a Python error set.
PyObject* call_bound(const BoundCall& call);

// The checked path's entry points (python/mqajit/_checked.py): `bound` takes BoundCall's fields
// in order; `unbound` and `unbound_reference` take what mqa_logits() and mqa_logits_reference()
// were given, to raise Python's own TypeError for a call that does not bind.
void set_checked_paths(PyObject* bound, PyObject* unbound, PyObject* unbound_reference);
// The checked path of a call that did not bind, with the arguments as given.
PyObject* call_unbound(bool reference, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);

// The row stride (in elements) of logits the binding allocates: rows start on 128-byte boundaries.
std::int64_t logits_row_stride(std::int64_t columns, std::int64_t element_bytes);

// mqajit.set_num_sms()'s process-wide cap (0: all), passed as MqaLogitsOptions::num_sms.
int num_sms_setting();
void set_num_sms_setting(int num_sms);
// mqajit.set_pdl()'s process-wide switch, passed as the options' pdl.
bool pdl_setting();
void set_pdl_setting(bool enabled);

}  // namespace mqajit::python
