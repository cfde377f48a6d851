#pragma once
// One owned reference to a Python object, released when it goes out of scope: the fast call's
// CPython code uses it so that no early return leaks a reference.

#include <Python.h>

namespace mqajit::python {

class Owned {
public:
    Owned() = default;
    explicit Owned(PyObject* object) : object_(object) {}  // steals the reference
    Owned(const Owned&) = delete;
    Owned& operator=(const Owned&) = delete;
    Owned(Owned&& other) noexcept : object_(other.release()) {}
    Owned& operator=(Owned&& other) noexcept {
        if (this != &other) reset(other.release());
        return *this;
    }
    ~Owned() { Py_XDECREF(object_); }

    static Owned borrow(PyObject* object) {
        Py_XINCREF(object);
        return Owned(object);
    }

    PyObject* get() const { return object_; }
    explicit operator bool() const { return object_ != nullptr; }
    PyObject* release() {
        PyObject* object = object_;
        object_ = nullptr;
        return object;
    }
    void reset(PyObject* object = nullptr) {
        PyObject* old = object_;
        object_ = object;
        Py_XDECREF(old);
    }

private:
    PyObject* object_ = nullptr;
};

}  // namespace mqajit::python
