#pragma once
// Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing past U+10FFFF. Tuning
// tables are UTF-8 text, and JSON and Python accept nothing else.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace mqajit {

inline constexpr std::string_view kUtf8ByteOrderMark = "\xEF\xBB\xBF";
inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

// The offset of the first byte that is not part of a well-formed sequence; nullopt when all are.
std::optional<std::size_t> invalid_utf8_at(std::string_view text);
// `text` with each ill-formed sequence replaced by U+FFFD.
std::string to_valid_utf8(std::string_view text);

}  // namespace mqajit
