#include "runtime/hip_device_query.hpp"

#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/check.hpp"
#include "variants/arch.hpp"

namespace mqajit {
namespace {

constexpr std::size_t kNameBytes = 256;

// The NUL-terminated text of a fixed char[256] field, or nullopt when it is not terminated.
std::optional<std::string> fixed_string(const std::vector<char>& buffer, std::size_t offset) {
    const char* begin = buffer.data() + offset;
    const void* end = std::memchr(begin, '\0', kNameBytes);
    if (end == nullptr) return std::nullopt;
    return std::string(begin, static_cast<const char*>(end));
}

}  // namespace

HipDeviceInfo query_hip_device(const HipApi& api, int ordinal) {
    auto attribute = [&](int which, std::string_view what) {
        int value = 0;
        hip_check(api, api.hipDeviceGetAttribute(&value, which, ordinal),
                  fmt::format("hipDeviceGetAttribute({}, device {})", what, ordinal));
        return value;
    };
    HipDeviceInfo info;
    char name[kNameBytes] = {};
    hip_check(api, api.hipDeviceGetName(name, sizeof(name) - 1, ordinal), fmt::format("hipDeviceGetName({})", ordinal));
    info.name = name;
    info.compute_units = attribute(kHipAttributeMultiprocessorCount, "MultiprocessorCount");
    info.max_shared_bytes_per_block =
        static_cast<std::size_t>(attribute(kHipAttributeMaxSharedMemoryPerBlock, "MaxSharedMemoryPerBlock"));

    // NOTES: gcnArchName exists only in the properties struct, whose layout HIP may change between
    // major versions; the name and the CU count it also holds are compared with what the two calls
    // above said, so a layout this build does not know is an error, never a misread arch.
    std::vector<char> properties(kHipPropsBufferBytes, '\0');
    hip_check(api, api.hipGetDevicePropertiesR0600(properties.data(), ordinal),
              fmt::format("hipGetDevicePropertiesR0600({})", ordinal));
    int properties_cus = 0;
    std::memcpy(&properties_cus, properties.data() + kHipPropsMultiProcessorCountOffset, sizeof(int));
    const std::optional<std::string> properties_name = fixed_string(properties, kHipPropsNameOffset);
    const std::optional<std::string> arch_name = fixed_string(properties, kHipPropsGcnArchNameOffset);
    MQAJIT_CHECK_KIND(driver,
                      properties_name == info.name && properties_cus == info.compute_units && arch_name &&
                          arch_name->starts_with("gfx"),
                      "the HIP runtime at {} fills hipDeviceProp_tR0600 in a layout this build does not read "
                      "(device {}: name '{}', {} CUs, gcnArchName '{}' there; '{}', {} CUs from the attribute "
                      "calls); report the ROCm version",
                      api.library_path(), ordinal, properties_name.value_or("?"), properties_cus,
                      arch_name.value_or("?"), info.name, info.compute_units);
    info.target_id = *arch_name;
    Arch::parse(info.target_id);  // throws invalid_argument with the accepted forms for a malformed name
    return info;
}

std::string describe(const HipDeviceInfo& info) {
    return fmt::format("{} ({}, {} CUs)", info.name, info.target_id, info.compute_units);
}

}  // namespace mqajit
