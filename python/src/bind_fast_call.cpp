// The fast entry points on torch tensors: mqa_logits() and mqa_logits_reference() with their two
// call forms bound here, in C++, and _fast_call() for callers that bound the names themselves
// (python/mqajit/_deepgemm.py). A call that does not bind cleanly goes to the checked path with
// the arguments as given, so Python's own TypeError (or the library's ValueError) is what the
// caller sees.

#include <pybind11/pybind11.h>

#include <cstdint>
#include <iterator>

#include "python/src/bindings.hpp"
#include "python/src/fast_call.hpp"
#include "python/src/owned.hpp"

namespace mqajit::python {
namespace {

namespace py = pybind11;
using namespace py::literals;

// Argument names in binding order. The two forms differ after kv: in the paired form
// (q, (kv, kv_scales), weights, ...) every later positional argument moves one slot left.
enum Slot { kKvScales, kWeights, kCuStarts, kCuEnds, kCleanLogits, kOut, kNumSlots };
constexpr Slot kSeparate[] = {kKvScales, kWeights, kCuStarts, kCuEnds, kCleanLogits, kOut};
constexpr Slot kPaired[] = {kWeights, kCuStarts, kCuEnds, kCleanLogits, kOut};
constexpr const char* kSlotNames[kNumSlots] = {"kv_scales", "weights", "cu_starts", "cu_ends", "clean_logits", "out"};
// variant and report are not the reference's.
enum KeywordOnly { kVariant, kReport, kMaxSeqlenK, kLogitsDtype, kNumKeywordOnly };
constexpr const char* kKeywordOnlyNames[kNumKeywordOnly] = {"variant", "report", "max_seqlen_k", "logits_dtype"};

struct Interned {
    PyObject* q = PyUnicode_InternFromString("q");
    PyObject* kv = PyUnicode_InternFromString("kv");
    PyObject* slots[kNumSlots] = {};
    PyObject* keyword_only[kNumKeywordOnly] = {};
    PyObject* mqa_logits = PyUnicode_InternFromString("mqa_logits");
    PyObject* mqa_logits_reference = PyUnicode_InternFromString("mqa_logits_reference");
    Interned() {
        for (int i = 0; i < kNumSlots; ++i) slots[i] = PyUnicode_InternFromString(kSlotNames[i]);
        for (int i = 0; i < kNumKeywordOnly; ++i) keyword_only[i] = PyUnicode_InternFromString(kKeywordOnlyNames[i]);
    }
};

const Interned& interned() {
    static const Interned* names = new Interned;  // NOTES: kept for the life of the process
    return *names;
}

bool same_name(PyObject* name, PyObject* interned_name) {
    return name == interned_name || PyUnicode_Compare(name, interned_name) == 0;
}

// Binds mqa_logits(q, kv, *args, variant=None, report=None, max_seqlen_k=0, logits_dtype=None,
// **kwargs) as python/mqajit/_arguments.py does; false for any call that would not bind.
bool bind_call_forms(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, BoundCall& call) {
    const Interned& names = interned();
    PyObject* q = nargs > 0 ? args[0] : nullptr;
    PyObject* kv = nargs > 1 ? args[1] : nullptr;
    const Py_ssize_t num_keywords = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < num_keywords; ++k) {
        PyObject* name = PyTuple_GET_ITEM(kwnames, k);
        PyObject** target = same_name(name, names.q) ? &q : same_name(name, names.kv) ? &kv : nullptr;
        if (target == nullptr) continue;
        if (*target != nullptr) return false;  // given twice
        *target = args[nargs + k];
    }
    if (q == nullptr || kv == nullptr) return false;
    const bool paired = PyTuple_Check(kv);
    const Slot* order = paired ? kPaired : kSeparate;
    const Py_ssize_t num_positional = paired ? std::size(kPaired) : std::size(kSeparate);
    if (nargs > 2 + num_positional) return false;

    PyObject* slots[kNumSlots] = {};
    PyObject* keyword_only[kNumKeywordOnly] = {};
    for (Py_ssize_t i = 2; i < nargs; ++i) slots[order[i - 2]] = args[i];
    for (Py_ssize_t k = 0; k < num_keywords; ++k) {
        PyObject* name = PyTuple_GET_ITEM(kwnames, k);
        if (same_name(name, names.q) || same_name(name, names.kv)) continue;
        PyObject** target = nullptr;
        // NOTES: the reference kernel takes no variant and fills no report.
        for (int i = call.reference ? kMaxSeqlenK : 0; i < kNumKeywordOnly && !target; ++i) {
            if (same_name(name, names.keyword_only[i])) target = &keyword_only[i];
        }
        for (Py_ssize_t i = 0; i < num_positional && !target; ++i) {
            if (same_name(name, names.slots[order[i]])) target = &slots[order[i]];
        }
        if (target == nullptr || *target != nullptr) return false;  // unknown, or given twice
        *target = args[nargs + k];
    }
    if (PyErr_Occurred()) return false;  // a failed name comparison
    if (paired) {
        if (PyTuple_GET_SIZE(kv) != 2) return false;
        slots[kKvScales] = PyTuple_GET_ITEM(kv, 1);
        kv = PyTuple_GET_ITEM(kv, 0);
    }
    call.tensors[0] = q;
    call.tensors[1] = kv;
    call.tensors[2] = slots[kKvScales];
    call.tensors[3] = slots[kWeights];
    call.tensors[4] = slots[kCuStarts];
    call.tensors[5] = slots[kCuEnds];
    if (slots[kCleanLogits]) call.clean_logits = slots[kCleanLogits];
    if (slots[kOut]) call.out = slots[kOut];
    if (keyword_only[kVariant]) call.variant = keyword_only[kVariant];
    if (keyword_only[kReport]) call.report = keyword_only[kReport];
    call.max_seqlen_k = keyword_only[kMaxSeqlenK];
    if (keyword_only[kLogitsDtype]) call.logits_dtype = keyword_only[kLogitsDtype];
    return true;
}

PyObject* call_forms(bool reference, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    BoundCall call;
    call.reference = reference;
    if (!bind_call_forms(args, nargs, kwnames, call)) {
        PyErr_Clear();
        return call_unbound(reference, args, nargs, kwnames);
    }
    call.function_name = reference ? interned().mqa_logits_reference : interned().mqa_logits;
    return call_bound(call);
}

PyObject* mqa_logits_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    return call_forms(false, args, PyVectorcall_NARGS(nargs), kwnames);
}

PyObject* mqa_logits_reference_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    return call_forms(true, args, PyVectorcall_NARGS(nargs), kwnames);
}

// _fast_call(function_name, q, kv, kv_scales, weights, cu_starts, cu_ends, clean_logits, out,
//            max_seqlen_k, logits_dtype, variant, report, reference): every name already bound.
PyObject* bound_call(PyObject* const* args, Py_ssize_t nargs, bool skip_library) {
    constexpr Py_ssize_t kArity = 14;
    if (nargs != kArity) {
        PyErr_Format(PyExc_TypeError, "_fast_call() takes %zd positional arguments (%zd given)", kArity, nargs);
        return nullptr;
    }
    BoundCall call;
    call.skip_library = skip_library;
    call.function_name = args[0];
    for (int i = 0; i < 6; ++i) call.tensors[i] = args[1 + i] == Py_None ? nullptr : args[1 + i];
    call.clean_logits = args[7];
    call.out = args[8];
    call.max_seqlen_k = args[9];
    call.logits_dtype = args[10];
    call.variant = args[11];
    call.report = args[12];
    const int reference = PyObject_IsTrue(args[13]);
    if (reference < 0) return nullptr;
    call.reference = reference == 1;
    return call_bound(call);
}

PyObject* fast_call_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
    return bound_call(args, nargs, false);
}

// The same without the library call: what the binding itself costs (python/benchmarks/host_time.py).
PyObject* fast_call_without_library_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
    return bound_call(args, nargs, true);
}

// NOTES: PyMethodDef stores every kind of C function as a PyCFunction; METH_FASTCALL says which it is.
template <typename Function>
PyCFunction as_c_function(Function* function) {
    return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(function));
}

constexpr const char* kMqaLogitsDoc =
    "mqa_logits(q, kv, *args, variant=None, report=None, max_seqlen_k=0, logits_dtype=None, **kwargs)\n--\n\n"
    "mqa_logits(q, kv, kv_scales, weights, cu_starts, cu_ends, clean_logits=True, out=None)\n"
    "mqa_logits(q, (kv, kv_scales), weights, cu_starts, cu_ends, clean_logits=True, out=None)\n\n"
    "logits[i, j] = kv_scales[j] * sum_h weights[i, h] * relu(q[i, h, :] . kv[j, :])\n"
    "for cu_starts[i] <= j < cu_ends[i] (clamped to [0, N)); -inf elsewhere when clean_logits,\n"
    "left unwritten otherwise.\n\n"
    "q: float8_e4m3fn [S, H, D] (H 32 or 64, D 64 or 128); kv: float8_e4m3fn [N, D];\n"
    "kv_scales: float32 [N]; weights: float32 [S, H]; cu_starts, cu_ends: int32 [S]; all CUDA\n"
    "tensors on one device, innermost dimension dense. Returns `out` (float32 [S, N], any row\n"
    "stride >= N) or, when out is None, a new [S, N] view of row-padded storage (rows start on\n"
    "128-byte boundaries; stride(0) shows the padding).\n\n"
    "Runs on torch.cuda.current_stream() of q's device without synchronizing the host, so it can\n"
    "be captured in a CUDA graph (after one warm-up call per shape, which may compile a kernel).\n"
    "variant: None lets the tuning table decide, \"baseline\" picks the pre-built kernel, anything\n"
    "else names a variant. report: a dict to fill with the serving \"kernel\" and the \"reason\".\n"
    "max_seqlen_k > 0 asks for compressed rows ([S, max_seqlen_k], row i holds logits[i, cu_starts[i] + c];\n"
    "needs clean_logits=False) and logits_dtype=torch.bfloat16 for bf16 logits when out is None (a bf16 out\n"
    "works too): the kernels write both in their one pass.\n"
    "The SM cap of mqajit.set_num_sms() applies. Bad input raises ValueError; runtime failures RuntimeError.\n"
    "One crossing into C++: the tensors are read there; anything unusual takes the checked Python path.";

constexpr const char* kReferenceDoc =
    "mqa_logits_reference(q, kv, *args, max_seqlen_k=0, logits_dtype=None, **kwargs)\n--\n\n"
    "The same operator and call forms as mqa_logits, from the slow fp32 reference kernel.";

// NOTES: mqajit/_ops.py exports tensor_mqa_logits as mqajit.mqa_logits; the methods keep the
// public names for their __name__ and messages.
struct Entry {
    const char* attribute;
    PyMethodDef method;
};
Entry g_entries[] = {
    {"tensor_mqa_logits",
     {"mqa_logits", as_c_function(&mqa_logits_entry), METH_FASTCALL | METH_KEYWORDS, kMqaLogitsDoc}},
    {"tensor_mqa_logits_reference",
     {"mqa_logits_reference", as_c_function(&mqa_logits_reference_entry), METH_FASTCALL | METH_KEYWORDS,
      kReferenceDoc}},
    {"_fast_call",
     {"_fast_call", as_c_function(&fast_call_entry), METH_FASTCALL,
      "_fast_call(function_name, q, kv, kv_scales, weights, cu_starts, cu_ends, clean_logits, out, max_seqlen_k, "
      "logits_dtype, variant, report, reference)\n--\n\nmqa_logits with every argument bound (for mqajit's "
      "wrappers)."}},
    {"_fast_call_without_library",
     {"_fast_call_without_library", as_c_function(&fast_call_without_library_entry), METH_FASTCALL,
      "_fast_call_without_library(...)\n--\n\n_fast_call's binding, tensor reads, stream and allocation without "
      "the library call, returning the logits tensor unwritten: what the binding costs, for benchmarks."}},
};

}  // namespace

void bind_fast_call(py::module_& module) {
    // NOTES: the fast entries are plain METH_FASTCALL functions, not pybind11 ones: pybind11's
    // argument dispatch would cost more than the rest of the binding's work together.
    Owned module_name(PyUnicode_FromString("mqajit"));
    for (Entry& entry : g_entries) {
        Owned function(PyCFunction_NewEx(&entry.method, nullptr, module_name.get()));
        if (!function) throw py::error_already_set();
        module.add_object(entry.attribute, py::reinterpret_steal<py::object>(function.release()));
    }
    module.def(
        "_set_checked_paths",
        [](py::object bound, py::object unbound, py::object unbound_reference) {
            set_checked_paths(bound.ptr(), unbound.ptr(), unbound_reference.ptr());
        },
        "bound"_a, "unbound"_a, "unbound_reference"_a,
        "The Python functions the fast entries hand unusual calls to (python/mqajit/_checked.py).");
    module.def(
        "set_num_sms_setting",
        [](int num_sms) {
            if (num_sms < 0) throw py::value_error("num_sms must be 0 (all) or a positive count");
            set_num_sms_setting(num_sms);
        },
        "num_sms"_a, "The process-wide SM cap every call passes as MqaLogitsOptions::num_sms (0: all).");
    module.def("num_sms_setting", &num_sms_setting, "The cap set_num_sms_setting() set (0: all).");
    module.def("set_pdl_setting", &set_pdl_setting, "enabled"_a,
               "The process-wide programmatic dependent launch switch every call passes as its options' pdl.");
    module.def("pdl_setting", &pdl_setting, "The switch set_pdl_setting() set.");
    module.def("logits_row_stride", &logits_row_stride, "columns"_a, "element_bytes"_a,
               "The row stride (in elements) of logits mqajit allocates: rows start on 128-byte boundaries.");
}

}  // namespace mqajit::python
