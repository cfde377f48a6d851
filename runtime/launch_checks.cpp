#include "runtime/launch_checks.hpp"

#include "core/check.hpp"

namespace mqajit {

void check_same_device(const LoadedKernel& kernel, bool same, int loaded_on, int launching_on) {
    MQAJIT_CHECK(same, "kernel {} was loaded on device {}, not on device {}; load it with the device that launches it",
                 kernel.name(), loaded_on, launching_on);
}

void check_launch_arguments(const LoadedKernel& kernel, const LaunchConfig& config, const void* argument,
                            std::size_t argument_bytes) {
    MQAJIT_CHECK(argument != nullptr && argument_bytes > 0, "kernel {} needs its by-value argument; got {} bytes at {}",
                 kernel.name(), argument_bytes, argument);
    MQAJIT_CHECK(config.grid_x > 0 && config.grid_y > 0 && config.grid_z > 0 && config.block_x > 0 &&
                     config.block_y > 0 && config.block_z > 0,
                 "kernel {} launch has an empty grid ({}, {}, {}) or block ({}, {}, {}); every extent must be >= 1",
                 kernel.name(), config.grid_x, config.grid_y, config.grid_z, config.block_x, config.block_y,
                 config.block_z);
}

}  // namespace mqajit
