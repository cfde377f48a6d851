#include "variants/arch.hpp"

#include <algorithm>
#include <cctype>

#include "core/check.hpp"

namespace mqajit {
namespace {

constexpr std::string_view kAcceptedForms =
    "accepted forms: sm_<NN>[a] (sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a, sm_120; 'sm90a' also works) "
    "or gfx<NNN>[:<feature>+|-...] (gfx942, gfx950, gfx90a, gfx942:sramecc+:xnack-)";

std::string lowercase(std::string_view text) {
    std::string result(text);
    std::ranges::transform(result, result.begin(), [](unsigned char c) { return std::tolower(c); });
    return result;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }
bool is_feature_char(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || c == '_'; }
int hex_value(char c) { return is_digit(c) ? c - '0' : c - 'a' + 10; }

[[noreturn]] void reject(std::string_view text, std::string_view problem) {
    MQAJIT_FAIL(invalid_argument, "arch '{}' is not valid: {}; {}", text, problem, kAcceptedForms);
}

// "sm_90a" / "sm90a": two or three digits, then an optional "a" (arch-specific features).
Arch parse_nvidia(std::string_view original, std::string_view text) {
    std::string_view rest = text.substr(2);
    if (rest.starts_with('_')) rest.remove_prefix(1);
    if (rest.find(':') != std::string_view::npos) reject(original, "feature flags (':...') exist only for gfx targets");
    Arch arch;
    arch.vendor = Vendor::nvidia;
    if (rest.ends_with('a')) {
        arch.arch_specific = true;
        rest.remove_suffix(1);
    }
    const bool digits_only = !rest.empty() && std::ranges::all_of(rest, is_digit);
    if (!digits_only || rest.size() < 2 || rest.size() > 3 || rest.front() == '0') {
        reject(original, "after 'sm_' give the compute capability as two or three digits, optionally followed by 'a'");
    }
    for (char c : rest) arch.number = arch.number * 10 + (c - '0');
    arch.name = "sm_" + std::string(rest) + (arch.arch_specific ? "a" : "");
    return arch;
}

// "gfx<major><minor><stepping>[:feature+|-]...": the stepping is one hex digit (gfx90a), so the number
// is major*100 + minor*10 + stepping, which keeps gfx942 -> 942 and gfx950 -> 950.
Arch parse_amd(std::string_view original, std::string_view text) {
    const std::size_t colon = text.find(':');
    const std::string_view processor = text.substr(3, colon == std::string_view::npos ? colon : colon - 3);
    const bool well_formed = (processor.size() == 3 || processor.size() == 4) && processor.front() != '0' &&
                             std::all_of(processor.begin(), processor.end() - 1, is_digit) &&
                             is_hex_digit(processor.back());
    if (!well_formed) {
        reject(original, "after 'gfx' give three or four characters: digits, the last one may be a hex digit (gfx90a)");
    }
    Arch arch;
    arch.vendor = Vendor::amd;
    arch.name = "gfx" + std::string(processor);
    int major = 0;
    for (char c : processor.substr(0, processor.size() - 2)) major = major * 10 + (c - '0');
    arch.number = major * 100 + (processor[processor.size() - 2] - '0') * 10 + hex_value(processor.back());

    std::string_view rest = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
    for (bool more = colon != std::string_view::npos; more;) {
        const std::size_t next = rest.find(':');
        const std::string_view feature = rest.substr(0, next);
        more = next != std::string_view::npos;
        if (more) rest.remove_prefix(next + 1);

        const std::string_view feature_name = feature.substr(0, feature.empty() ? 0 : feature.size() - 1);
        const bool valid = !feature_name.empty() && (feature.back() == '+' || feature.back() == '-') &&
                           std::ranges::all_of(feature_name, is_feature_char);
        if (!valid) reject(original, fmt::format("feature '{}' must be a name followed by '+' or '-', like xnack-", feature));
        for (const std::string& seen : arch.features) {
            if (std::string_view(seen).substr(0, seen.size() - 1) == feature_name) {
                reject(original, fmt::format("feature '{}' is given twice", feature_name));
            }
        }
        arch.features.emplace_back(feature);
    }
    // NOTES: LLVM target IDs list features alphabetically; sorting makes equal targets compare equal.
    std::ranges::sort(arch.features);
    return arch;
}

}  // namespace

Arch Arch::parse(std::string_view text) {
    const std::string lowered = lowercase(text);
    if (lowered.starts_with("sm")) return parse_nvidia(text, lowered);
    if (lowered.starts_with("gfx")) return parse_amd(text, lowered);
    reject(text, "it starts with neither 'sm' nor 'gfx'");
}

std::string Arch::target_id() const {
    std::string id = name;
    for (const std::string& feature : features) id += ":" + feature;
    return id;
}

std::string_view to_string(Vendor vendor) {
    switch (vendor) {
        case Vendor::nvidia: return "nvidia";
        case Vendor::amd: return "amd";
    }
    return "unknown";
}

}  // namespace mqajit
