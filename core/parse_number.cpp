#include "core/parse_number.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace mqajit {
namespace {

template <class T>
std::optional<T> parse_whole(std::string_view text, std::string* problem) {
    T value{};
    const char* end = text.data() + text.size();
    // NOTES: from_chars takes no '+', spaces or base prefixes, and reports overflow instead of
    // saturating as strtoll does.
    const auto [ptr, error] = std::from_chars(text.data(), end, value);
    if (!text.empty() && error == std::errc() && ptr == end) return value;
    if (problem) {
        if (error == std::errc::result_out_of_range && ptr == end) {
            *problem = fmt::format("'{}' is out of range ({} to {})", text, std::numeric_limits<T>::min(),
                                   std::numeric_limits<T>::max());
        } else {
            *problem = fmt::format("'{}' is not a whole number", text);
        }
    }
    return std::nullopt;
}

}  // namespace

std::optional<int> parse_whole_int(std::string_view text, std::string* problem) {
    return parse_whole<int>(text, problem);
}

std::optional<std::int64_t> parse_whole_int64(std::string_view text, std::string* problem) {
    return parse_whole<std::int64_t>(text, problem);
}

std::optional<std::uint64_t> parse_whole_uint64(std::string_view text, std::string* problem) {
    return parse_whole<std::uint64_t>(text, problem);
}

std::optional<double> parse_finite_double(std::string_view text, std::string* problem) {
    double value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, error] = std::from_chars(text.data(), end, value);
    if (!text.empty() && error == std::errc() && ptr == end && std::isfinite(value)) return value;
    if (problem) {
        if (ptr == end && !text.empty() && (error == std::errc::result_out_of_range || !std::isfinite(value))) {
            *problem = fmt::format("'{}' is not a finite number", text);
        } else {
            *problem = fmt::format("'{}' is not a number", text);
        }
    }
    return std::nullopt;
}

}  // namespace mqajit
