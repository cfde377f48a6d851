// paged_mqa_logits on torch tensors in one crossing into C++, as fast_call.cpp does for
// mqa_logits: python/mqajit/_paged.py binds the names and calls _paged_fast_call(), which reads the
// tensors, allocates the logits, takes the current stream and runs the library with the GIL
// released. A call it does not take as it is (a missing or CPU tensor, another device than the
// current one, a max_context_len that is not a plain int, a report that is not a dict...) goes to
// the checked path, _paged.py's _call(), which says what is wrong or makes the call the long way.

#include <Python.h>
#include <pybind11/pybind11.h>

#include <climits>
#include <string>

#include "mqajit/paged_mqa_logits.hpp"
#include "python/src/bindings.hpp"
#include "python/src/fast_call.hpp"
#include "python/src/fast_call_support.hpp"
#include "python/src/owned.hpp"
#include "python/src/tensor_reader.hpp"
#include "python/src/torch_hooks.hpp"

namespace mqajit::python {
namespace {

namespace py = pybind11;

// _paged_fast_call's arguments, in order (those of _paged.py's _call()).
enum Argument {
    kFunctionName,
    kQ,
    kKvCache,
    kWeights,
    kContextLens,
    kBlockTable,
    kMaxContextLen,
    kCleanLogits,
    kOut,
    kVariant,
    kReport,
    kReference,
    kArity
};
constexpr int kNumTensors = 5;  // q, kv_cache, weights, context_lens, block_table

Owned& checked_path() {
    static Owned* path = new Owned;  // NOTES: never destroyed: it outlives the interpreter
    return *path;
}

struct PagedScalars {
    int max_context_len = 0;
    bool clean_logits = false;
    bool reference = false;
    std::string variant;
};

// The non-tensor arguments, when each is of the plain type the fast path takes.
bool read_scalars(PyObject* const* args, PagedScalars& scalars) {
    if (!PyLong_Check(args[kMaxContextLen])) return false;
    const long width = PyLong_AsLong(args[kMaxContextLen]);
    // 0 goes to the checked path too, which refuses it.
    if ((width == -1 && PyErr_Occurred()) || width <= 0 || width > INT_MAX) return false;
    scalars.max_context_len = static_cast<int>(width);
    const int clean = PyObject_IsTrue(args[kCleanLogits]);
    const int reference = PyObject_IsTrue(args[kReference]);
    if (clean < 0 || reference < 0) return false;
    scalars.clean_logits = clean == 1;
    scalars.reference = reference == 1;
    if (args[kVariant] != Py_None) {
        Py_ssize_t size = 0;
        const char* text = PyUnicode_Check(args[kVariant]) ? PyUnicode_AsUTF8AndSize(args[kVariant], &size) : nullptr;
        if (text == nullptr) return false;
        scalars.variant.assign(text, static_cast<std::size_t>(size));
    }
    return args[kReport] == Py_None || PyDict_Check(args[kReport]);
}

Outcome try_fast(PyObject* const* args, Owned& result) {
    TorchHooks hooks;
    Owned hooks_alive;
    if (!torch_hooks(hooks, hooks_alive)) return Outcome::checked_path;
    CudaTensor tensors[kNumTensors + 1];
    for (int i = 0; i < kNumTensors; ++i) {
        if (!read_cuda_tensor(hooks, args[kQ + i], tensors[i], /*allow_uint8=*/kQ + i == kKvCache)) {
            return Outcome::checked_path;
        }
    }
    const long device = tensors[0].device;
    for (int i = 1; i < kNumTensors; ++i) {
        if (tensors[i].device != device) return Outcome::checked_path;
    }
    PagedScalars scalars;
    if (!read_scalars(args, scalars)) {
        PyErr_Clear();
        return Outcome::checked_path;
    }
    void* stream = nullptr;
    if (!current_stream_of(hooks, device, stream)) return Outcome::checked_path;

    Owned out;
    TensorView& logits = tensors[kNumTensors].view;
    if (args[kOut] == Py_None) {
        // The library checks the shapes; a malformed q gets a 1-row out it rejects.
        const TensorView& q = tensors[0].view;
        const std::int64_t rows = q.rank >= 2 ? q.shape[0] * q.shape[1] : 1;
        const Outcome allocated = allocate_logits(hooks, device, rows, scalars.max_context_len, DType::float32, out,
                                                  logits);
        if (allocated != Outcome::done) return allocated;
    } else {
        // An out whose width is not max_context_len: the checked path says so.
        if (!read_cuda_tensor(hooks, args[kOut], tensors[kNumTensors]) || tensors[kNumTensors].device != device ||
            logits.rank != 2 || logits.shape[1] != scalars.max_context_len) {
            return Outcome::checked_path;
        }
        out = Owned::borrow(args[kOut]);
    }

    DispatchReport served;
    const bool want_report = args[kReport] != Py_None && !scalars.reference;
    const PagedMqaLogitsOptions options{.clean_logits = scalars.clean_logits,
                                        .stream = stream,
                                        .variant = std::move(scalars.variant),
                                        .num_sms = num_sms_setting(),
                                        .report = want_report ? &served : nullptr,
                                        .pdl = pdl_setting()};
    const TensorView &q = tensors[0].view, &kv_cache = tensors[1].view, &weights = tensors[2].view,
                     &context_lens = tensors[3].view, &block_table = tensors[4].view;
    const Outcome ran = run_without_gil([&] {
        if (scalars.reference) {
            paged_mqa_logits_reference(q, kv_cache, weights, context_lens, block_table, logits, options.clean_logits,
                                       options.stream);
        } else {
            paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, logits, options);
        }
    });
    if (ran != Outcome::done) return ran;
    if (want_report && fill_report(args[kReport], served) != Outcome::done) return Outcome::failed;
    result = std::move(out);
    return Outcome::done;
}

PyObject* paged_fast_call_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != kArity) {
        PyErr_Format(PyExc_TypeError, "_paged_fast_call() takes %d positional arguments (%zd given)", kArity, nargs);
        return nullptr;
    }
    Owned result;
    switch (try_fast(args, result)) {
        case Outcome::done: return result.release();
        case Outcome::failed: return nullptr;
        case Outcome::checked_path: break;
    }
    const Owned path = Owned::borrow(checked_path().get());
    if (!path) {
        PyErr_SetString(PyExc_RuntimeError,
                        "mqajit's paged checked path is not installed (import mqajit, not mqajit._mqajit alone)");
        return nullptr;
    }
    return PyObject_Vectorcall(path.get(), args, static_cast<std::size_t>(nargs), nullptr);
}

PyMethodDef g_paged_fast_call = {
    "_paged_fast_call", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&paged_fast_call_entry)),
    METH_FASTCALL,
    "_paged_fast_call(function_name, q, kv_cache, weights, context_lens, block_table, max_context_len, "
    "clean_logits, out, variant, report, reference)\n--\n\npaged_mqa_logits on torch tensors with every argument "
    "bound, in one crossing (for mqajit's wrappers); unusual calls go to the checked path."};

}  // namespace

void bind_paged_fast_call(py::module_& module) {
    Owned module_name(PyUnicode_FromString("mqajit"));
    Owned function(PyCFunction_NewEx(&g_paged_fast_call, nullptr, module_name.get()));
    if (!function) throw py::error_already_set();
    module.add_object("_paged_fast_call", py::reinterpret_steal<py::object>(function.release()));
    module.def(
        "_set_paged_checked_path", [](py::object path) { checked_path() = Owned::borrow(path.ptr()); }, py::arg("path"),
        "The Python function _paged_fast_call hands unusual calls to (python/mqajit/_paged.py's _call).");
}

}  // namespace mqajit::python
