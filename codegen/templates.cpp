#include "codegen/templates.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "codegen/include_lines.hpp"
#include "core/check.hpp"

namespace mqajit {
namespace {

const EmbeddedFile& embedded(std::string_view name, std::string_view included_by) {
    const std::span<const EmbeddedFile> all = embedded_templates();
    const auto found = std::ranges::find(all, name, &EmbeddedFile::name);
    MQAJIT_CHECK_KIND(internal, found != all.end(), "template {} (included by {}) is not embedded in the library", name,
                      included_by.empty() ? "a family" : included_by);
    return *found;
}

// The names in `text`'s `#include "name"` lines, in order.
std::vector<std::string_view> quoted_includes(std::string_view text) {
    std::vector<std::string_view> names;
    for (std::size_t line_start = 0; line_start < text.size();) {
        std::size_t line_end = text.find('\n', line_start);
        if (line_end == std::string_view::npos) line_end = text.size();
        if (const auto name = quoted_include(text.substr(line_start, line_end - line_start))) names.push_back(*name);
        line_start = line_end + 1;
    }
    return names;
}

}  // namespace

std::span<const EmbeddedFile> templates_included_by(std::string_view header) {
    static std::mutex mutex;
    static std::map<std::string, std::vector<EmbeddedFile>, std::less<>> closures;
    const std::lock_guard lock(mutex);
    if (auto found = closures.find(header); found != closures.end()) return found->second;

    // NOTES: every include is followed, those inside #if blocks too: a header the compiler skips
    // costs a slightly wider cache key, a missed one would leave a changed template unnoticed.
    std::vector<EmbeddedFile> closure = {embedded(header, "")};
    for (std::size_t next = 0; next < closure.size(); ++next) {
        for (std::string_view name : quoted_includes(closure[next].text)) {
            if (std::ranges::find(closure, name, &EmbeddedFile::name) == closure.end()) {
                closure.push_back(embedded(name, closure[next].name));
            }
        }
    }
    return closures.emplace(std::string(header), std::move(closure)).first->second;
}

}  // namespace mqajit
