#pragma once
// The checks every device makes before a launch reaches its driver, whatever the vendor.

#include <cstddef>

#include "runtime/device.hpp"

namespace mqajit {

// Error(invalid_argument) when the by-value argument is missing or an extent of the grid or block is zero.
void check_launch_arguments(const LoadedKernel& kernel, const LaunchConfig& config, const void* argument,
                            std::size_t argument_bytes);

// Error(invalid_argument) when the kernel was loaded on another device than the one launching it.
void check_same_device(const LoadedKernel& kernel, bool same, int loaded_on, int launching_on);

}  // namespace mqajit
