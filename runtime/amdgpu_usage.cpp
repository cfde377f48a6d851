#include <charconv>
#include <map>
#include <optional>

#include "runtime/compiler_clang_hip.hpp"

namespace mqajit {
namespace {

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
    return text;
}

std::optional<int> to_int(std::string_view text) {
    int value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

// "<file>:2:1: remark:     VGPRs: 164 [-Rpass-analysis=kernel-resource-usage]" -> {"VGPRs", "164"}.
std::optional<std::pair<std::string_view, std::string_view>> remark_field(std::string_view line) {
    constexpr std::string_view kRemark = "remark:";
    const std::size_t at = line.find(kRemark);
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view text = line.substr(at + kRemark.size());
    if (const std::size_t tag = text.rfind(" [-Rpass-analysis="); tag != std::string_view::npos) {
        text = text.substr(0, tag);
    }
    const std::size_t colon = text.rfind(": ");
    if (colon == std::string_view::npos) return std::nullopt;
    return std::pair{trim(text.substr(0, colon)), trim(text.substr(colon + 2))};
}

}  // namespace

ResourceUsage parse_amdgpu_resource_usage(std::string_view log, std::string_view kernel_name) {
    std::map<std::string, ResourceUsage, std::less<>> functions;
    ResourceUsage* current = nullptr;
    std::size_t start = 0;
    while (start < log.size()) {
        std::size_t end = log.find('\n', start);
        if (end == std::string_view::npos) end = log.size();
        const auto field = remark_field(log.substr(start, end - start));
        start = end + 1;
        if (!field) continue;
        const auto [key, value] = *field;
        if (key == "Function Name") {
            current = &functions[std::string(value)];
            continue;
        }
        if (current == nullptr) continue;
        const std::optional<int> number = to_int(value);
        if (!number) continue;
        if (key == "VGPRs") current->registers = *number;
        else if (key == "AGPRs") current->agprs = *number;
        else if (key == "TotalSGPRs") current->sgprs = *number;
        else if (key == "VGPRs Spill") current->vgpr_spills = *number;
        else if (key == "SGPRs Spill") current->sgpr_spills = *number;
        else if (key == "ScratchSize [bytes/lane]") current->scratch_bytes = *number;
        else if (key == "LDS Size [bytes/block]") current->shared_bytes = *number;
    }

    if (auto found = functions.find(kernel_name); !kernel_name.empty() && found != functions.end()) {
        return found->second;
    }
    const ResourceUsage* best = nullptr;
    for (const auto& [name, usage] : functions) {
        if (best == nullptr || usage.registers > best->registers) best = &usage;
    }
    return best != nullptr ? *best : ResourceUsage{};
}

}  // namespace mqajit
