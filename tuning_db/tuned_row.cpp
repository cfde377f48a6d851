#include "tuning_db/tuned_row.hpp"

#include <cmath>
#include <type_traits>

#include <fmt/format.h>

#include "core/utf8.hpp"
#include "mqajit/error.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace mqajit {
namespace {

template <class Key>
std::optional<std::string> any_row_problem(const TunedRowOf<Key>& row) {
    const Key& key = row.key;
    // NOTES: rows reach JSON and Python, which take UTF-8 only; text read back from a database that
    // held other bytes carries U+FFFD in their place (row_table.cpp), which is refused here too.
    std::optional<std::string> text_problem;
    auto check_text = [&](std::string_view column, const auto& value) {
        if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) {
            if (text_problem) return;
            if (const auto bad = invalid_utf8_at(value)) {
                text_problem = fmt::format("{} is not valid UTF-8 (byte 0x{:02X} at {}); write it as UTF-8", column,
                                           static_cast<unsigned char>(value[*bad]), *bad + 1);
            } else if (value.find(kReplacementCharacter) != std::string::npos) {
                text_problem = fmt::format("{} holds U+FFFD where its text was not valid UTF-8; import it again from "
                                           "a UTF-8 file", column);
            }
        }
    };
    key.visit(check_text);
    row.visit_values(check_text);
    if (text_problem) return text_problem;
    if (auto problem = key_problem(key)) return problem;
    try {
        // NOTES: the runtime looks rows up by the canonical name (Arch::parse(...).name), so a row
        // stored under another spelling ("sm90a", "gfx942:xnack-") would never be found.
        const std::string canonical = Arch::parse(key.arch).name;
        if (canonical != key.arch) return fmt::format("arch '{}' must be written '{}'", key.arch, canonical);
    } catch (const Error& e) {
        return e.what();
    }
    if (row.backend != kBackendJit && row.backend != kBackendBaseline)
        return fmt::format("backend '{}' is unknown; use jit (or flydsl) or baseline (or triton)", row.backend);
    if (row.backend == kBackendJit) {
        try {
            (void)Variant::parse(row.variant);
        } catch (const Error& e) {
            return fmt::format("variant '{}' does not parse: {}", row.variant, e.what());
        }
    } else if (row.variant != kBackendBaseline) {
        return fmt::format("a baseline row's variant is '{}'; it must be 'baseline'", row.variant);
    }
    if (!std::isfinite(row.us) || row.us <= 0) return fmt::format("us is {}; times must be positive", row.us);
    if (row.baseline_us && (!std::isfinite(*row.baseline_us) || *row.baseline_us <= 0))
        return fmt::format("baseline_us is {}; times must be positive (or leave it empty)", *row.baseline_us);
    return std::nullopt;
}

}  // namespace

std::optional<std::string> normalize_backend(std::string_view name) {
    if (name == kBackendJit || name == "flydsl") return std::string(kBackendJit);
    if (name == kBackendBaseline || name == "triton") return std::string(kBackendBaseline);
    return std::nullopt;
}

std::optional<std::string> row_problem(const TunedRow& row) { return any_row_problem(row); }
std::optional<std::string> row_problem(const PagedTunedRow& row) { return any_row_problem(row); }
std::optional<std::string> row_problem(const TopkTunedRow& row) { return any_row_problem(row); }

}  // namespace mqajit
