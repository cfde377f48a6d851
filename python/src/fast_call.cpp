#include "python/src/fast_call.hpp"

#include <atomic>
#include <climits>
#include <cstdint>
#include <string>

#include "mqajit/mqa_logits.hpp"
#include "python/src/bindings.hpp"
#include "python/src/fast_call_support.hpp"
#include "python/src/owned.hpp"
#include "python/src/tensor_reader.hpp"
#include "python/src/torch_hooks.hpp"

namespace mqajit::python {

namespace {

std::atomic<int> g_num_sms{0};
std::atomic<bool> g_pdl{false};

// NOTES: module state, touched with the GIL held.
struct CheckedPaths {
    Owned bound, unbound, unbound_reference;
};
CheckedPaths& checked_paths() {
    static CheckedPaths* paths = new CheckedPaths;  // NOTES: never destroyed: it outlives the interpreter
    return *paths;
}

PyObject* checked_path_missing() {
    PyErr_SetString(PyExc_RuntimeError,
                    "mqajit's checked path is not installed (import mqajit, not mqajit._mqajit alone)");
    return nullptr;
}

// NOTES: logits rows we allocate start on 128-byte boundaries, so each warp's row stores begin on
// a cache line; the returned view's stride(0) shows the padding (the checked path and the torch
// op's fake implementation use the same rule, through logits_row_stride()).
constexpr std::int64_t kRowAlignBytes = 128;

struct Scalars {
    bool clean_logits = true;
    int max_seqlen_k = 0;
    std::string variant;
    DType logits_dtype = DType::float32;
};

// The non-tensor arguments, when each is of the plain type the fast path takes.
bool read_scalars(const TorchHooks& hooks, const BoundCall& call, Scalars& scalars) {
    const int clean = PyObject_IsTrue(call.clean_logits);
    if (clean < 0) return false;
    scalars.clean_logits = clean == 1;
    if (call.max_seqlen_k != nullptr) {
        if (!PyLong_Check(call.max_seqlen_k)) return false;
        const long value = PyLong_AsLong(call.max_seqlen_k);
        if ((value == -1 && PyErr_Occurred()) || value < INT_MIN || value > INT_MAX) return false;
        scalars.max_seqlen_k = static_cast<int>(value);
    }
    if (call.variant != Py_None) {
        Py_ssize_t size = 0;
        const char* text = PyUnicode_Check(call.variant) ? PyUnicode_AsUTF8AndSize(call.variant, &size) : nullptr;
        if (text == nullptr) return false;
        scalars.variant.assign(text, static_cast<std::size_t>(size));
    }
    if (call.report != Py_None && !PyDict_Check(call.report)) return false;
    if (call.logits_dtype != Py_None) {
        const std::optional<DType> dtype = dtype_of(hooks, call.logits_dtype);
        if (!dtype || (*dtype != DType::float32 && *dtype != DType::bfloat16) || call.out != Py_None) return false;
        scalars.logits_dtype = *dtype;
    }
    return true;
}

Outcome try_fast(const BoundCall& call, Owned& result) {
    TorchHooks hooks;
    Owned hooks_alive;
    if (!torch_hooks(hooks, hooks_alive)) return Outcome::checked_path;
    CudaTensor tensors[7];
    for (int i = 0; i < 6; ++i) {
        if (call.tensors[i] == nullptr || !read_cuda_tensor(hooks, call.tensors[i], tensors[i])) {
            return Outcome::checked_path;
        }
    }
    const long device = tensors[0].device;
    for (int i = 1; i < 6; ++i) {
        if (tensors[i].device != device) return Outcome::checked_path;
    }
    Scalars scalars;
    if (!read_scalars(hooks, call, scalars)) {
        PyErr_Clear();
        return Outcome::checked_path;
    }
    void* stream = nullptr;
    if (!current_stream_of(hooks, device, stream)) return Outcome::checked_path;

    Owned out;
    if (call.out == Py_None) {
        // The library checks the shapes; a malformed q or kv gets a 1-row or 1-column out it rejects.
        const std::int64_t rows = tensors[0].view.rank >= 1 ? tensors[0].view.shape[0] : 1;
        const std::int64_t kv_rows = tensors[1].view.rank >= 1 ? tensors[1].view.shape[0] : 1;
        const std::int64_t columns = scalars.max_seqlen_k > 0 ? scalars.max_seqlen_k : kv_rows;
        const Outcome allocated =
            allocate_logits(hooks, device, rows, columns, scalars.logits_dtype, out, tensors[6].view);
        if (allocated != Outcome::done) return allocated;
    } else {
        if (!read_cuda_tensor(hooks, call.out, tensors[6]) || tensors[6].device != device) {
            return Outcome::checked_path;
        }
        out = Owned::borrow(call.out);
    }

    DispatchReport served;
    const bool want_report = call.report != Py_None;
    const MqaLogitsOptions options{.clean_logits = scalars.clean_logits,
                                   .stream = stream,
                                   .variant = std::move(scalars.variant),
                                   .num_sms = num_sms_setting(),
                                   .max_seqlen_k = scalars.max_seqlen_k,
                                   .report = want_report ? &served : nullptr,
                                   .pdl = pdl_setting()};
    const TensorView& q = tensors[0].view;
    if (call.skip_library) {
        result = std::move(out);
        return Outcome::done;
    }
    const Outcome ran = run_without_gil([&] {
        if (call.reference) {
            mqa_logits_reference(q, tensors[1].view, tensors[2].view, tensors[3].view, tensors[4].view,
                                 tensors[5].view, tensors[6].view, options.clean_logits, options.stream,
                                 options.max_seqlen_k);
        } else {
            mqa_logits(q, tensors[1].view, tensors[2].view, tensors[3].view, tensors[4].view, tensors[5].view,
                       tensors[6].view, options);
        }
    });
    if (ran != Outcome::done) return ran;
    if (want_report && fill_report(call.report, served) != Outcome::done) return Outcome::failed;
    result = std::move(out);
    return Outcome::done;
}

PyObject* zero() {
    static PyObject* const value = PyLong_FromLong(0);  // NOTES: kept for the life of the process
    return value;
}

PyObject* call_checked(const BoundCall& call) {
    const auto or_none = [](PyObject* object) { return object ? object : Py_None; };
    PyObject* arguments[] = {nullptr,
                             call.function_name,
                             or_none(call.tensors[0]),
                             or_none(call.tensors[1]),
                             or_none(call.tensors[2]),
                             or_none(call.tensors[3]),
                             or_none(call.tensors[4]),
                             or_none(call.tensors[5]),
                             call.clean_logits,
                             call.out,
                             call.max_seqlen_k ? call.max_seqlen_k : zero(),
                             call.logits_dtype,
                             call.variant,
                             call.report,
                             call.reference ? Py_True : Py_False};
    constexpr std::size_t kCount = sizeof(arguments) / sizeof(arguments[0]) - 1;
    const Owned path = Owned::borrow(checked_paths().bound.get());
    if (!path) return checked_path_missing();
    return PyObject_Vectorcall(path.get(), arguments + 1, kCount | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
}

}  // namespace

std::int64_t logits_row_stride(std::int64_t columns, std::int64_t element_bytes) {
    const std::int64_t align = kRowAlignBytes / element_bytes;
    return (columns + align - 1) / align * align;
}

int num_sms_setting() { return g_num_sms.load(std::memory_order_relaxed); }
void set_num_sms_setting(int num_sms) { g_num_sms.store(num_sms, std::memory_order_relaxed); }
bool pdl_setting() { return g_pdl.load(std::memory_order_relaxed); }
void set_pdl_setting(bool enabled) { g_pdl.store(enabled, std::memory_order_relaxed); }

void set_checked_paths(PyObject* bound, PyObject* unbound, PyObject* unbound_reference) {
    CheckedPaths& paths = checked_paths();
    paths.bound = Owned::borrow(bound);
    paths.unbound = Owned::borrow(unbound);
    paths.unbound_reference = Owned::borrow(unbound_reference);
}

PyObject* call_unbound(bool reference, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    CheckedPaths& paths = checked_paths();
    const Owned path = Owned::borrow(reference ? paths.unbound_reference.get() : paths.unbound.get());
    if (!path) return checked_path_missing();
    return PyObject_Vectorcall(path.get(), args, static_cast<std::size_t>(nargs), kwnames);
}

PyObject* call_bound(const BoundCall& call) {
    Owned result;
    switch (try_fast(call, result)) {
        case Outcome::done: return result.release();
        case Outcome::failed: return nullptr;
        case Outcome::checked_path: break;
    }
    if (call.skip_library) {
        PyErr_SetString(PyExc_RuntimeError, "the fast path does not take this call: it would go to the checked path");
        return nullptr;
    }
    return call_checked(call);
}

}  // namespace mqajit::python
