#pragma once
// What both fast calls (fast_call.cpp: mqa_logits, paged_fast_call.cpp: paged_mqa_logits) share:
// the GIL released around the library call, the current device and stream from torch's hooks,
// the logits allocation and the report.

#include <Python.h>

#include <cstdint>
#include <exception>

#include "mqajit/mqa_logits.hpp"
#include "mqajit/tensor.hpp"
#include "python/src/bindings.hpp"
#include "python/src/owned.hpp"
#include "python/src/torch_hooks.hpp"

namespace mqajit::python {

// done: the call ran (or its result is ready); checked_path: the fast path does not take it as it
// is (no Python error set); failed: a Python error is set.
enum class Outcome { done, checked_path, failed };

class GilReleased {
public:
    GilReleased() : state_(PyEval_SaveThread()) {}
    ~GilReleased() { PyEval_RestoreThread(state_); }
    GilReleased(const GilReleased&) = delete;
    GilReleased& operator=(const GilReleased&) = delete;

private:
    PyThreadState* state_;
};

// Runs `library_call` with the GIL released; an mqajit::Error becomes the Python exception of its
// kind, anything else a RuntimeError (Outcome::failed, the error set).
template <class LibraryCall>
Outcome run_without_gil(LibraryCall&& library_call) {
    try {
        const GilReleased released;
        library_call();
    } catch (const Error& error) {
        raise_python_error(error);
        return Outcome::failed;
    } catch (const std::exception& error) {
        PyErr_SetString(PyExc_RuntimeError, error.what());
        return Outcome::failed;
    }
    return Outcome::done;
}

// The current CUstream of `device` when that is the calling thread's current CUDA device; false,
// with no Python error set, otherwise (the checked path then switches devices for the call).
bool current_stream_of(const TorchHooks& hooks, long device, void*& stream);

// torch.empty_strided((rows, columns), (row_stride, 1), dtype=..., device=...) with rows padded
// to logits_row_stride(), viewed in `logits`.
Outcome allocate_logits(const TorchHooks& hooks, long device, std::int64_t rows, std::int64_t columns, DType dtype,
                        Owned& out, TensorView& logits);

// report["kernel"] and report["reason"] from what served the call.
Outcome fill_report(PyObject* report, const DispatchReport& served);

}  // namespace mqajit::python
