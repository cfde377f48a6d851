#include "codegen/expanded_unit.hpp"

#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "codegen/include_lines.hpp"

namespace mqajit {
namespace {

const EmbeddedFile* find_header(const GeneratedKernel& kernel, std::string_view name) {
    for (const EmbeddedFile& header : kernel.headers) {
        if (header.name == name) return &header;
    }
    return nullptr;
}

void expand_into(std::ostringstream& out, std::string_view text, const GeneratedKernel& kernel,
                 std::set<std::string>& included) {
    std::istringstream lines{std::string(text)};
    std::string line;
    while (std::getline(lines, line)) {
        if (is_pragma_once(line)) continue;
        const std::optional<std::string_view> name = quoted_include(line);
        const EmbeddedFile* header = name ? find_header(kernel, *name) : nullptr;
        if (header == nullptr) {
            out << line << '\n';
            continue;
        }
        if (!included.emplace(*name).second) continue;  // NOTES: #pragma once: the second include is empty
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
