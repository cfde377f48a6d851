#include "codegen/expanded_unit.hpp"

#include <optional>
#include <set>
#include <sstream>
#include <string_view>

namespace mqajit {
namespace {

const EmbeddedFile* find_header(const GeneratedKernel& kernel, std::string_view name) {
    for (const EmbeddedFile& header : kernel.headers) {
        if (header.name == name) return &header;
    }
    return nullptr;
}

// The directive of a preprocessor line with its '#' and the spaces around it removed
// ("include \"a.cuh\"", "pragma once"), or "" for any other line.
std::string_view directive(std::string_view line) {
    const auto skip_spaces = [&] {
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    };
    skip_spaces();
    if (line.empty() || line.front() != '#') return {};
    line.remove_prefix(1);
    skip_spaces();
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
    return line;
}

// The quoted name of an `#include "name"` line, else nullopt.
std::optional<std::string> quoted_include(std::string_view line) {
    std::string_view rest = directive(line);
    if (!rest.starts_with("include")) return std::nullopt;
    rest.remove_prefix(std::string_view("include").size());
    const auto open = rest.find('"');
    if (open == std::string_view::npos || rest.substr(0, open).find_first_not_of(" \t") != std::string_view::npos)
        return std::nullopt;
    const auto close = rest.find('"', open + 1);
    if (close == std::string_view::npos) return std::nullopt;
    return std::string(rest.substr(open + 1, close - open - 1));
}

bool is_pragma_once(std::string_view line) {
    std::string_view rest = directive(line);
    if (!rest.starts_with("pragma")) return false;
    rest.remove_prefix(std::string_view("pragma").size());
    const auto word = rest.find_first_not_of(" \t");
    return word != 0 && word != std::string_view::npos && rest.substr(word) == "once";
}

void expand_into(std::ostringstream& out, std::string_view text, const GeneratedKernel& kernel,
                 std::set<std::string>& included) {
    std::istringstream lines{std::string(text)};
    std::string line;
    while (std::getline(lines, line)) {
        if (is_pragma_once(line)) continue;
        const std::optional<std::string> name = quoted_include(line);
        const EmbeddedFile* header = name ? find_header(kernel, *name) : nullptr;
        if (header == nullptr) {
            out << line << '\n';
            continue;
        }
        if (!included.insert(*name).second) continue;  // NOTES: #pragma once: the second include is empty
        out << "// ---- begin " << *name << " ----\n";
        expand_into(out, header->text, kernel, included);
        out << "// ---- end " << *name << " ----\n";
    }
}

}  // namespace

std::string expanded_unit(const GeneratedKernel& kernel) {
    std::ostringstream out;
    std::set<std::string> included;
    expand_into(out, kernel.source, kernel, included);
    return out.str();
}

}  // namespace mqajit
