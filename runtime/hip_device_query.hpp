#pragma once
// What mqajit needs to know about one AMD GPU, asked of the HIP runtime without HIP headers.

#include <cstddef>
#include <string>

#include "runtime/hip_api.hpp"

namespace mqajit {

struct HipDeviceInfo {
    std::string name;              // "AMD Instinct MI300X"
    std::string target_id;         // gcnArchName with its feature flags, "gfx942:sramecc+:xnack-"
    int compute_units = 0;         // the tuning table's cu_num
    std::size_t max_shared_bytes_per_block = 0;  // LDS per workgroup
};

// Offsets into hipDeviceProp_tR0600, the struct hipGetDevicePropertiesR0600 fills (ROCm 6.0 and
// later). Only these fields are read; the buffer handed over is far larger than the struct.
inline constexpr std::size_t kHipPropsNameOffset = 0;                 // char name[256]
inline constexpr std::size_t kHipPropsMultiProcessorCountOffset = 388;  // int multiProcessorCount
inline constexpr std::size_t kHipPropsGcnArchNameOffset = 1160;       // char gcnArchName[256]
inline constexpr std::size_t kHipPropsBufferBytes = 8192;

// Reads device `ordinal`'s name, gcnArchName, CU count and LDS limit. Throws Error(driver) naming the
// failing call, or saying that the properties' layout is not the one this build reads (the name and
// CU count there must agree with hipDeviceGetName and hipDeviceGetAttribute).
HipDeviceInfo query_hip_device(const HipApi& api, int ordinal);

// "AMD Instinct MI300X (gfx942:sramecc+:xnack-, 304 CUs)".
std::string describe(const HipDeviceInfo& info);

}  // namespace mqajit
