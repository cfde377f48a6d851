#include "codegen/include_lines.hpp"

#include <algorithm>

namespace mqajit {
namespace {

constexpr std::string_view kBlanks = " \t\r";

std::string_view trimmed(std::string_view text) {
    text.remove_prefix(std::min(text.find_first_not_of(kBlanks), text.size()));
    const std::size_t last = text.find_last_not_of(kBlanks);
    return last == std::string_view::npos ? std::string_view{} : text.substr(0, last + 1);
}

// The directive of a preprocessor line, its '#' and the blanks around it removed ("include
// \"a.cuh\"", "pragma once"), or nullopt for any other line.
std::optional<std::string_view> directive(std::string_view line) {
    line = trimmed(line);
    if (!line.starts_with('#')) return std::nullopt;
    return trimmed(line.substr(1));
}

// What follows `word` in `text` when `text` starts with it and a blank or the end follows, trimmed.
std::optional<std::string_view> after_word(std::string_view text, std::string_view word) {
    if (!text.starts_with(word)) return std::nullopt;
    text.remove_prefix(word.size());
    if (!text.empty() && kBlanks.find(text.front()) == std::string_view::npos && text.front() != '"')
        return std::nullopt;
    return trimmed(text);
}

}  // namespace

std::optional<std::string_view> quoted_include(std::string_view line) {
    const std::optional<std::string_view> text = directive(line);
    const std::optional<std::string_view> rest = text ? after_word(*text, "include") : std::nullopt;
    if (!rest || !rest->starts_with('"')) return std::nullopt;
    const std::size_t close = rest->find('"', 1);
    if (close == std::string_view::npos) return std::nullopt;
    return rest->substr(1, close - 1);
}

bool is_pragma_once(std::string_view line) {
    const std::optional<std::string_view> text = directive(line);
    const std::optional<std::string_view> rest = text ? after_word(*text, "pragma") : std::nullopt;
    return rest && *rest == "once";
}

}  // namespace mqajit
