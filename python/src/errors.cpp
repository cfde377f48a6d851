// mqajit::Error crosses into Python as ValueError (the caller can fix the input: invalid_argument,
// unsupported) or RuntimeError (everything else), with the library's message unchanged and the
// kind in the exception's `kind` attribute ("invalid argument", "driver error", ...).

#include <Python.h>

#include <exception>
#include <string>

#include "mqajit/error.hpp"
#include "python/src/bindings.hpp"

namespace mqajit::python {
namespace {

PyObject* python_type_for(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::invalid_argument:
        case ErrorKind::unsupported: return PyExc_ValueError;
        default: return PyExc_RuntimeError;
    }
}

}  // namespace

void raise_python_error(const Error& error) {
    PyObject* type = python_type_for(error.kind());
    PyObject* exception = PyObject_CallFunction(type, "s", error.what());
    if (exception == nullptr) return;  // the call failed and set its own exception
    const std::string kind(to_string(error.kind()));
    PyObject* kind_text = PyUnicode_FromStringAndSize(kind.data(), static_cast<Py_ssize_t>(kind.size()));
    if (kind_text != nullptr) {
        PyObject_SetAttrString(exception, "kind", kind_text);
        Py_DECREF(kind_text);
    }
    PyErr_SetObject(type, exception);
    Py_DECREF(exception);
}

void bind_errors(pybind11::module_&) {
    pybind11::register_exception_translator([](std::exception_ptr pending) {
        try {
            if (pending) std::rethrow_exception(pending);
        } catch (const Error& error) {
            raise_python_error(error);
        }
    });
}

}  // namespace mqajit::python
