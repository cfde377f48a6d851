#include "mqajit/status.hpp"

#include "mqajit/error.hpp"
#include "runtime/backend.hpp"
#include "tuning_db/locations.hpp"

namespace mqajit {

RuntimeStatus runtime_status() {
    const DriverStatus status = live_driver_status();
    RuntimeStatus result{.gpu_available = status.available, .message = status.message, .system_db = {}};
    try {
        const tuning::SystemDbLocation location = tuning::locate_system_db();
        if (location.path) result.system_db = location.path->string();
    } catch (const Error&) {
        // NOTES: an unreadable setting leaves system_db empty; the lookup itself reports it.
    }
    return result;
}

}  // namespace mqajit
