#include <cctype>
#include <charconv>
#include <map>
#include <optional>

#include "runtime/compiler.hpp"

namespace mqajit {
namespace {

// The whole number written just before `unit` on `line` ("168 registers" -> 168).
std::optional<int> number_before(std::string_view line, std::string_view unit) {
    for (std::size_t at = line.find(unit); at != std::string_view::npos; at = line.find(unit, at + 1)) {
        std::size_t end = at;
        while (end > 0 && line[end - 1] == ' ') --end;
        std::size_t begin = end;
        while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
        int value = 0;
        if (begin < end && std::from_chars(line.data() + begin, line.data() + end, value).ec == std::errc()) {
            return value;
        }
    }
    return std::nullopt;
}

// The text after `marker` up to the closing quote (or the end of the line, without the quote).
std::optional<std::string> name_after(std::string_view line, std::string_view marker, bool quoted) {
    const std::size_t at = line.find(marker);
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest = line.substr(at + marker.size());
    if (quoted) {
        const std::size_t close = rest.find('\'');
        if (close == std::string_view::npos) return std::nullopt;
        rest = rest.substr(0, close);
    }
    while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.back()))) rest.remove_suffix(1);
    return std::string(rest);
}

struct FunctionUsage {
    ResourceUsage usage;
    bool is_entry = false;  // has a "Used N registers" line: a kernel, not a non-inlined callee
};

}  // namespace

ResourceUsage parse_ptxas_usage(std::string_view log, std::string_view kernel_name) {
    // NOTES: ptxas reports each kernel as "Compiling entry function 'k'", then "Function properties
    // for k" with a stack/spill line, then "Used N registers ...". Non-inlined device functions get
    // a properties block too, so counts are kept per function name and one is chosen at the end.
    std::map<std::string, FunctionUsage, std::less<>> functions;
    std::string entry;
    std::string properties_of;
    std::size_t start = 0;
    while (start <= log.size()) {
        std::size_t end = log.find('\n', start);
        if (end == std::string_view::npos) end = log.size();
        const std::string_view line = log.substr(start, end - start);
        start = end + 1;

        if (line.find("wgmma.mma_async instructions are serialized") != std::string_view::npos) {
            // NOTES: the warning names the kernel after " in the function '" on the same line.
            const auto name = name_after(line, "in the function '", true);
            functions[name.value_or(entry)].usage.wgmma_serialized = true;
        } else if (auto name = name_after(line, "Compiling entry function '", true)) {
            entry = *name;
            properties_of = *name;
        } else if (auto name = name_after(line, "Function properties for ", false)) {
            properties_of = *name;
        } else if (line.find("stack frame") != std::string_view::npos) {
            ResourceUsage& usage = functions[properties_of].usage;
            usage.stack_bytes = number_before(line, " bytes stack frame").value_or(usage.stack_bytes);
            usage.spill_store_bytes = number_before(line, " bytes spill stores").value_or(usage.spill_store_bytes);
            usage.spill_load_bytes = number_before(line, " bytes spill loads").value_or(usage.spill_load_bytes);
        } else if (auto registers = number_before(line, " registers");
                   registers && line.find("Used ") != std::string_view::npos) {
            FunctionUsage& function = functions[entry];
            function.is_entry = true;
            function.usage.registers = *registers;
            // ptxas leaves "N bytes smem" out when a kernel has no static shared memory.
            function.usage.shared_bytes = number_before(line, " bytes smem").value_or(0);
        }
        if (end == log.size()) break;
    }

    if (auto found = functions.find(kernel_name); !kernel_name.empty() && found != functions.end()) {
        return found->second.usage;
    }
    const FunctionUsage* best = nullptr;
    for (const auto& [name, function] : functions) {
        if (!function.is_entry) continue;
        if (best == nullptr || function.usage.registers > best->usage.registers) best = &function;
    }
    return best != nullptr ? best->usage : ResourceUsage{};
}

ResourceUsage parse_ptxas_usage(const std::string& log) { return parse_ptxas_usage(std::string_view(log), {}); }

}  // namespace mqajit
