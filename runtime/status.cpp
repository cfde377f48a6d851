#include "mqajit/status.hpp"

#include "runtime/backend.hpp"

namespace mqajit {

RuntimeStatus runtime_status() {
    const DriverStatus status = backend_for(Vendor::nvidia).driver_status();
    return RuntimeStatus{.gpu_available = status.available, .message = status.message};
}

}  // namespace mqajit
