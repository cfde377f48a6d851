#pragma once
// Checked reads of JSON numbers the tools take from files: a whole number must be one (32.5 is
// not) and fit its type exactly; nlohmann's get<int>() would truncate or wrap instead.

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/check.hpp"

namespace mqajit::tools {

// `value` as T; throws Error(invalid_argument) naming `name` and `what` (the file and row).
template <class T>
T json_whole_number(const nlohmann::json& value, const char* name, const std::string& what) {
    MQAJIT_CHECK(value.is_number_integer(), "{}: '{}' is {}; it must be a whole number", what, name, value.dump());
    const bool fits = value.is_number_unsigned()
                          ? value.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())
                          : std::in_range<T>(value.get<std::int64_t>());
    MQAJIT_CHECK(fits, "{}: '{}' is {}, out of range ({} to {})", what, name, value.dump(),
                 std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    return value.is_number_unsigned() ? static_cast<T>(value.get<std::uint64_t>())
                                      : static_cast<T>(value.get<std::int64_t>());
}

// The member `name` of `object` as T, or `fallback` when absent.
template <class T>
T json_whole_member(const nlohmann::json& object, const char* name, T fallback, const std::string& what) {
    const auto found = object.find(name);
    return found == object.end() ? fallback : json_whole_number<T>(*found, name, what);
}

}  // namespace mqajit::tools
