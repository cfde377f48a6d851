#include "tuning_db/tuned_row.hpp"

#include <cmath>

#include <fmt/format.h>

#include "mqajit/error.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace mqajit {
namespace {

template <class Key>
std::optional<std::string> any_row_problem(const TunedRowOf<Key>& row) {
    const Key& key = row.key;
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

}  // namespace mqajit
