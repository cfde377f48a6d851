// What the runtime found here: runtime_status() (never raises) and device_info() (the live
// device's arch and SM count, the tuning table's arch and cu_num).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "mqajit/status.hpp"
#include "python/src/bindings.hpp"
#include "runtime/backend.hpp"

namespace mqajit::python {
namespace {

namespace py = pybind11;
using namespace py::literals;

py::dict status_dict() {
    const RuntimeStatus status = runtime_status();
    return py::dict("gpu_available"_a = status.gpu_available, "message"_a = status.message);
}

py::dict device_dict(std::optional<int> ordinal) {
    Backend& backend = live_backend();
    const std::shared_ptr<Device> device = ordinal ? backend.open_device(*ordinal) : backend.current_device();
    return py::dict("ordinal"_a = device->ordinal(), "name"_a = device->name(), "arch"_a = device->arch(),
                    "cu_num"_a = device->multiprocessor_count(), "driver_version"_a = device->driver_version());
}

}  // namespace

void bind_status(py::module_& module) {
    module.def("runtime_status", &status_dict,
               "{'gpu_available': bool, 'message': str}: whether a GPU driver answered, in one line. Never raises.");
    module.def("device_info", &device_dict, "ordinal"_a = py::none(),
               "{'ordinal', 'name', 'arch', 'cu_num', 'driver_version'} of device `ordinal`, or of the calling "
               "thread's current device (its current CUDA context, or HIP's current device; device 0 when none), on the "
               "backend that sees a GPU. RuntimeError when there is no GPU.");
}

}  // namespace mqajit::python
