#include "mqajit/status.hpp"

#include "runtime/backend.hpp"

namespace mqajit {

RuntimeStatus runtime_status() {
    const DriverStatus status = live_driver_status();
    return RuntimeStatus{.gpu_available = status.available, .message = status.message};
}

}  // namespace mqajit
