#include "python/src/torch_hooks.hpp"

#include <array>
#include <string>


namespace mqajit::python {
namespace {

namespace py = pybind11;
using namespace py::literals;

constexpr std::size_t kMaxCachedDevices = 64;

// NOTES: module state of one interpreter; every access holds the GIL.
struct HookCache {
    Owned loader;  // () -> hooks object; raises when torch is not usable
    Owned source;  // the hooks object the fields borrow from
    TorchHooks hooks;
    std::array<Owned, kMaxCachedDevices> devices;
};

HookCache& cache() {
    static HookCache* instance = new HookCache;  // NOTES: never destroyed: it outlives the interpreter
    return *instance;
}

// The capsule in `source.reader` (None or absent: no reader); one of another version is not used.
const TorchReader* torch_reader_of(PyObject* source) {
    Owned capsule(PyObject_GetAttrString(source, "reader"));
    if (!capsule || capsule.get() == Py_None) {
        PyErr_Clear();
        return nullptr;
    }
    const auto* reader = static_cast<const TorchReader*>(PyCapsule_GetPointer(capsule.get(), kTorchReaderCapsuleName));
    if (reader == nullptr || reader->version != kTorchReaderVersion) {
        PyErr_Clear();
        return nullptr;
    }
    return reader;  // NOTES: static data of the reader module, which is never unloaded
}

// Fills `hooks` from the attributes of `source`; false with a Python error set if one is missing.
bool fill(PyObject* source, TorchHooks& hooks) {
    const std::pair<const char*, PyObject**> fields[] = {
        {"float8_e4m3fn", &hooks.float8_e4m3fn}, {"float32", &hooks.float32},
        {"int32", &hooks.int32},                 {"bfloat16", &hooks.bfloat16},
        {"uint8", &hooks.uint8},
        {"empty_strided", &hooks.empty_strided}, {"current_device", &hooks.current_device},
        {"current_raw_stream", &hooks.current_raw_stream}, {"device", &hooks.device}};
    for (const auto& [name, field] : fields) {
        Owned value(PyObject_GetAttrString(source, name));
        if (!value) return false;
        *field = value.get();  // NOTES: borrowed; `source` holds the reference
    }
    hooks.reader = torch_reader_of(source);
    return true;
}

void install(PyObject* source) {
    HookCache& state = cache();
    for (Owned& device : state.devices) device.reset();
    state.hooks = {};
    state.source.reset();
    if (source == nullptr || source == Py_None) return;
    TorchHooks hooks;
    if (!fill(source, hooks)) throw py::error_already_set();
    state.source = Owned::borrow(source);
    state.hooks = hooks;
}

}  // namespace

bool torch_hooks(TorchHooks& hooks, Owned& keep_alive) {
    HookCache& state = cache();
    if (!state.source) {
        if (!state.loader) return false;
        Owned source(PyObject_CallNoArgs(state.loader.get()));
        TorchHooks loaded;
        if (!source || !fill(source.get(), loaded)) {
            PyErr_Clear();  // the checked path loads them again and raises what went wrong
            return false;
        }
        state.source = std::move(source);
        state.hooks = loaded;
    }
    hooks = state.hooks;
    keep_alive = Owned::borrow(state.source.get());
    return true;
}

std::optional<DType> dtype_of(const TorchHooks& hooks, PyObject* dtype) {
    if (dtype == Py_None) return std::nullopt;
    if (dtype == hooks.float8_e4m3fn) return DType::float8_e4m3;
    if (dtype == hooks.float32) return DType::float32;
    if (dtype == hooks.int32) return DType::int32;
    if (dtype == hooks.bfloat16) return DType::bfloat16;
    // NOTES: uint8 is not read: a uint8 q or kv is most likely packed FP4, which the checked path
    // names as such (mqajit/_checked.py).
    return std::nullopt;
}

PyObject* dtype_object(const TorchHooks& hooks, DType dtype) {
    switch (dtype) {
        case DType::float8_e4m3: return hooks.float8_e4m3fn;
        case DType::float32: return hooks.float32;
        case DType::int32: return hooks.int32;
        case DType::bfloat16: return hooks.bfloat16;
        case DType::uint8: return hooks.uint8;
    }
    return Py_None;
}

Owned device_object(const TorchHooks& hooks, long ordinal) {
    if (ordinal < 0 || static_cast<std::size_t>(ordinal) >= kMaxCachedDevices) return Owned();
    Owned& slot = cache().devices[static_cast<std::size_t>(ordinal)];
    if (!slot) {
        Owned index(PyLong_FromLong(ordinal));
        if (index) slot.reset(PyObject_CallOneArg(hooks.device, index.get()));
        if (!slot) PyErr_Clear();
    }
    return Owned::borrow(slot.get());
}

void bind_torch_hooks(py::module_& module) {
    module.def(
        "_set_torch_hooks_loader",
        [](py::object loader) {
            cache().loader = Owned::borrow(loader.ptr());
            install(nullptr);
        },
        "loader"_a = py::none(),
        "The callable that makes the torch hooks on first use (mqajit._torch_hooks.load); forgets loaded hooks.");
    module.def(
        "_install_torch_hooks", [](py::object hooks) { install(hooks.ptr()); }, "hooks"_a,
        "Uses `hooks` (attributes as in mqajit._torch_hooks.load's result) from now on; None forgets them, so "
        "the loader runs again on the next call. Tests install fakes with it.");
}

}  // namespace mqajit::python
