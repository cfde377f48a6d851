#include "python/src/tensor_reader.hpp"

#include <array>
#include <cstdint>
#include <optional>

#include "python/src/owned.hpp"

namespace mqajit::python {
namespace {

struct Names {
    PyObject* is_cuda = PyUnicode_InternFromString("is_cuda");
    PyObject* get_device = PyUnicode_InternFromString("get_device");
    PyObject* dtype = PyUnicode_InternFromString("dtype");
    PyObject* shape = PyUnicode_InternFromString("shape");
    PyObject* stride = PyUnicode_InternFromString("stride");
    PyObject* data_ptr = PyUnicode_InternFromString("data_ptr");
};

const Names& names() {
    static const Names* interned = new Names;  // NOTES: kept for the life of the process
    return *interned;
}

// self.name() without a bound-method object.
PyObject* call_method(PyObject* self, PyObject* name) {
    PyObject* slots[2] = {nullptr, self};  // slot 0: scratch that PY_VECTORCALL_ARGUMENTS_OFFSET allows
    return PyObject_VectorcallMethod(name, slots + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
}

// A tuple (torch.Size is one) of at most kMaxRank ints.
bool read_dims(PyObject* sequence, int& rank, std::array<std::int64_t, TensorView::kMaxRank>& dims) {
    if (sequence == nullptr || !PyTuple_Check(sequence)) return false;
    const Py_ssize_t size = PyTuple_GET_SIZE(sequence);
    if (size > TensorView::kMaxRank) return false;
    for (Py_ssize_t dim = 0; dim < size; ++dim) {
        PyObject* item = PyTuple_GET_ITEM(sequence, dim);
        if (!PyLong_Check(item)) return false;
        const long long value = PyLong_AsLongLong(item);
        if (value == -1 && PyErr_Occurred()) return false;
        dims[static_cast<std::size_t>(dim)] = value;
    }
    rank = static_cast<int>(size);
    return true;
}

bool read_tensor(const TorchHooks& hooks, PyObject* object, CudaTensor& tensor, bool allow_uint8) {
    const Names& name = names();
    Owned is_cuda(PyObject_GetAttr(object, name.is_cuda));
    if (!is_cuda || PyObject_IsTrue(is_cuda.get()) != 1) return false;
    Owned device(call_method(object, name.get_device));
    if (!device || !PyLong_Check(device.get())) return false;
    tensor.device = PyLong_AsLong(device.get());
    if (tensor.device < 0) return false;

    Owned dtype(PyObject_GetAttr(object, name.dtype));
    if (!dtype) return false;
    const std::optional<DType> known =
        allow_uint8 && dtype.get() == hooks.uint8 && hooks.uint8 != Py_None ? DType::uint8 : dtype_of(hooks, dtype.get());
    if (!known) return false;
    tensor.view.dtype = *known;

    Owned shape(PyObject_GetAttr(object, name.shape));
    Owned strides(call_method(object, name.stride));
    int stride_rank = -1;
    if (!read_dims(shape.get(), tensor.view.rank, tensor.view.shape) ||
        !read_dims(strides.get(), stride_rank, tensor.view.strides) || stride_rank != tensor.view.rank) {
        return false;
    }
    return read_data_ptr(object, tensor.view.data);
}

bool read_with_torch(const TorchReader& reader, PyObject* object, CudaTensor& tensor, bool allow_uint8) {
    int dtype = 0;
    if (reader.read(object, TensorView::kMaxRank, &tensor.view.data, &dtype, &tensor.view.rank,
                    tensor.view.shape.data(), tensor.view.strides.data(), &tensor.device) != 1) {
        return false;
    }
    if (dtype == static_cast<int>(DType::uint8) && !allow_uint8) return false;
    tensor.view.dtype = static_cast<DType>(dtype);
    return true;
}

}  // namespace

bool read_cuda_tensor(const TorchHooks& hooks, PyObject* object, CudaTensor& tensor, bool allow_uint8) {
    if (object == Py_None) return false;
    if (hooks.reader != nullptr && read_with_torch(*hooks.reader, object, tensor, allow_uint8)) return true;
    if (read_tensor(hooks, object, tensor, allow_uint8)) return true;
    PyErr_Clear();
    return false;
}

bool read_data_ptr(PyObject* object, void*& data) {
    Owned address(call_method(object, names().data_ptr));
    if (address && PyLong_Check(address.get())) {
        data = PyLong_AsVoidPtr(address.get());
        if (!PyErr_Occurred()) return true;
    }
    PyErr_Clear();
    return false;
}

}  // namespace mqajit::python
