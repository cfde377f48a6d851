#pragma once
// Checked number parsing for everything that enters from outside (environment, CLI, CSV, JSON,
// SQLite): a whole number must fit its type exactly and a real must be finite; anything else is
// refused with a reason, never truncated, wrapped or saturated.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mqajit {

// Decimal digits with an optional leading '-' (for signed types), nothing else. On failure
// returns nullopt and, if `problem` is given, sets it to "'12x' is not a whole number" or
// "'4294967297' is out of range (-2147483648 to 2147483647)".
std::optional<int> parse_whole_int(std::string_view text, std::string* problem = nullptr);
std::optional<std::int64_t> parse_whole_int64(std::string_view text, std::string* problem = nullptr);
std::optional<std::uint64_t> parse_whole_uint64(std::string_view text, std::string* problem = nullptr);

// A decimal real ("1.5", "2e-3"); NaN, infinities and values past double's range are refused.
std::optional<double> parse_finite_double(std::string_view text, std::string* problem = nullptr);

}  // namespace mqajit
