#include "python/src/fast_call_support.hpp"

#include "python/src/fast_call.hpp"
#include "python/src/tensor_reader.hpp"

namespace mqajit::python {

namespace {

// callable() as a long; false when the call fails or returns something else.
bool call_for_long(PyObject* callable, long& value) {
    Owned result(PyObject_CallNoArgs(callable));
    if (!result || !PyLong_Check(result.get())) return false;
    value = PyLong_AsLong(result.get());
    return !(value == -1 && PyErr_Occurred());
}

// A CUstream as the int torch gives it; false (no error set) when the call fails or returns something else.
bool call_for_stream(PyObject* callable, PyObject* device_index, void*& stream) {
    Owned result(PyObject_CallOneArg(callable, device_index));
    if (!result || !PyLong_Check(result.get())) return false;
    stream = PyLong_AsVoidPtr(result.get());
    return !PyErr_Occurred();
}

}  // namespace

bool current_stream_of(const TorchHooks& hooks, long device, void*& stream) {
    Owned device_index(PyLong_FromLong(device));
    long current_device = -1;
    // NOTES: the library runs in the calling thread's current CUDA context; when that is not the
    // tensors' device, the checked path switches to it for the call.
    if (!device_index || !call_for_long(hooks.current_device, current_device) || current_device != device ||
        !call_for_stream(hooks.current_raw_stream, device_index.get(), stream)) {
        PyErr_Clear();
        return false;
    }
    return true;
}

// torch.empty_strided((rows, columns), (row_stride, 1), dtype=..., device=...), viewed in `logits`.
Outcome allocate_logits(const TorchHooks& hooks, long device, std::int64_t rows, std::int64_t columns, DType dtype,
                        Owned& out, TensorView& logits) {
    const std::int64_t row_stride = logits_row_stride(columns, element_size_bytes(dtype));
    logits.dtype = dtype;
    logits.rank = 2;
    logits.shape = {rows, columns, 0};
    logits.strides = {row_stride, 1, 0};
    if (hooks.reader != nullptr) {
        out.reset(hooks.reader->empty(rows, columns, row_stride, static_cast<int>(dtype), device, &logits.data));
        return out ? Outcome::done : Outcome::failed;  // failed: torch's own error (out of memory)
    }
    const Owned device_arg = device_object(hooks, device);
    if (!device_arg) return Outcome::checked_path;
    static PyObject* const keyword_names = Py_BuildValue("(ss)", "dtype", "device");
    Owned sizes(Py_BuildValue("(LL)", static_cast<long long>(rows), static_cast<long long>(columns)));
    Owned strides(Py_BuildValue("(Li)", static_cast<long long>(row_stride), 1));
    if (!sizes || !strides || keyword_names == nullptr) return Outcome::failed;
    PyObject* arguments[] = {nullptr, sizes.get(), strides.get(), dtype_object(hooks, dtype), device_arg.get()};
    out.reset(PyObject_Vectorcall(hooks.empty_strided, arguments + 1, 2 | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                  keyword_names));
    if (!out) return Outcome::failed;  // e.g. out of memory: torch's own error, as an allocation in Python gives
    return read_data_ptr(out.get(), logits.data) ? Outcome::done : Outcome::checked_path;
}

Outcome fill_report(PyObject* report, const DispatchReport& served) {
    Owned kernel(PyUnicode_FromStringAndSize(served.kernel.data(), static_cast<Py_ssize_t>(served.kernel.size())));
    Owned reason(PyUnicode_FromStringAndSize(served.reason.data(), static_cast<Py_ssize_t>(served.reason.size())));
    if (!kernel || !reason || PyDict_SetItemString(report, "kernel", kernel.get()) < 0 ||
        PyDict_SetItemString(report, "reason", reason.get()) < 0) {
        return Outcome::failed;
    }
    return Outcome::done;
}

}  // namespace mqajit::python
