// mqajit._mqajit_torch: tensor reads and the logits allocation through torch's C++ types, for
// the fast call (python/src/fast_call.cpp). Built only where the interpreter's torch has its
// headers (python/CMakeLists.txt), loaded by python/mqajit/_torch_hooks.py only when the torch
// it was built against is the one imported; everywhere else the fast call reads tensors through
// Python attributes. It links torch, never libmqajit.

#include <ATen/ops/empty_strided.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/version.h>

#include <cstdint>

#include "mqajit/tensor.hpp"
#include "python/src/torch_reader_api.hpp"

namespace {

using mqajit::DType;

bool dtype_of(c10::ScalarType type, DType& dtype) {
    switch (type) {
#if TORCH_VERSION_MAJOR >= 2
        case c10::ScalarType::Float8_e4m3fn: dtype = DType::float8_e4m3; return true;
#endif
        case c10::ScalarType::Float: dtype = DType::float32; return true;
        case c10::ScalarType::Int: dtype = DType::int32; return true;
        case c10::ScalarType::BFloat16: dtype = DType::bfloat16; return true;
        case c10::ScalarType::Byte: dtype = DType::uint8; return true;  // the paged KV cache
        default: return false;
    }
}

int read(PyObject* object, int max_rank, void** data, int* dtype, int* rank, std::int64_t* shape,
         std::int64_t* strides, long* device) noexcept {
    // NOTES: subclasses (FakeTensor, DTensor, ...) may mean something else by their metadata:
    // they are read through Python, as any other object.
    if (!THPVariable_CheckExact(object)) return 0;
    try {
        const at::Tensor& tensor = THPVariable_Unpack(object);
        DType known{};
        if (!tensor.defined() || !tensor.is_cuda() || tensor.layout() != c10::kStrided ||
            !dtype_of(tensor.scalar_type(), known) || tensor.dim() > max_rank) {
            return 0;
        }
        const auto sizes = tensor.sizes();  // NOTES: throws for symbolic sizes, caught below
        const auto steps = tensor.strides();
        for (std::size_t dim = 0; dim < sizes.size(); ++dim) {
            shape[dim] = sizes[dim];
            strides[dim] = steps[dim];
        }
        *data = tensor.data_ptr();
        *dtype = static_cast<int>(known);
        *rank = static_cast<int>(tensor.dim());
        *device = tensor.get_device();
        return 1;
    } catch (...) {
        return 0;
    }
}

PyObject* empty(std::int64_t rows, std::int64_t columns, std::int64_t row_stride, int dtype, long device,
                void** data) {
    HANDLE_TH_ERRORS
    const auto type = dtype == static_cast<int>(DType::bfloat16) ? c10::ScalarType::BFloat16 : c10::ScalarType::Float;
    at::Tensor logits = at::empty_strided(
        {rows, columns}, {row_stride, 1},
        at::TensorOptions().dtype(type).device(c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(device))));
    *data = logits.data_ptr();
    return THPVariable_Wrap(std::move(logits));
    END_HANDLE_TH_ERRORS
}

const mqajit::python::TorchReader kReader{mqajit::python::kTorchReaderVersion, &read, &empty};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "_mqajit_torch",
                       "mqajit's tensor reader on torch's C++ types (see mqajit._torch_hooks)", -1, nullptr,
                       nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__mqajit_torch() {
    PyObject* module = PyModule_Create(&kModule);
    if (module == nullptr) return nullptr;
    PyObject* capsule = PyCapsule_New(const_cast<mqajit::python::TorchReader*>(&kReader),
                                      mqajit::python::kTorchReaderCapsuleName, nullptr);
    if (capsule == nullptr || PyModule_AddObject(module, "reader", capsule) < 0 ||
        PyModule_AddStringConstant(module, "torch_version", TORCH_VERSION) < 0) {
        Py_XDECREF(capsule);
        Py_DECREF(module);
        return nullptr;
    }
    return module;
}
