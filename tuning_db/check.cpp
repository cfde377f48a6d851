#include "tuning_db/check.hpp"

#include <fmt/format.h>

#include "mqajit/error.hpp"
#include "variants/arch.hpp"
#include "codegen/variant_registry.hpp"
#include "variants/variant.hpp"

namespace mqajit::tuning {

CheckReport check_config_files(const std::vector<std::filesystem::path>& files) {
    ConfigRows loaded = load_config_files(files);
    CheckReport report;
    report.files = std::move(loaded.files);
    report.num_rows = loaded.rows.size();
    report.problems = std::move(loaded.problems);
    report.collisions = std::move(loaded.collisions);
    for (const TunedRow& row : loaded.rows) {
        if (auto problem = unrunnable_problem(row)) report.problems.push_back({row.origin, *problem});
    }
    return report;
}

void check_rows(const std::vector<TunedRow>& rows, CheckReport& report) {
    report.num_rows += rows.size();
    for (const TunedRow& row : rows) {
        auto problem = row_problem(row);
        if (!problem) problem = unrunnable_problem(row);
        if (problem) report.problems.push_back({fmt::format("{} ({})", row.origin, to_string(row.key)), *problem});
    }
}

std::optional<std::string> unrunnable_problem(const TunedRow& row) {
    if (row.backend != kBackendJit) return std::nullopt;
    try {
        const Arch arch = Arch::parse(row.key.arch);
        const Support support =
            VariantRegistry::instance().supports(arch, row.key.heads, row.key.head_dim, Variant::parse(row.variant));
        if (support) return std::nullopt;
        return fmt::format("variant {} cannot run on {} at heads={} head_dim={}: {}", row.variant, arch.name,
                           row.key.heads, row.key.head_dim, support.reason);
    } catch (const Error& e) {
        return fmt::format("variant {} cannot run on {}: {}", row.variant, row.key.arch, e.what());
    }
}

void drop_unrunnable(std::vector<TunedRow>& rows, std::vector<RowProblem>& problems) {
    std::erase_if(rows, [&](const TunedRow& row) {
        auto problem = unrunnable_problem(row);
        if (problem) problems.push_back({row.origin, *problem + "; row skipped"});
        return problem.has_value();
    });
}

}  // namespace mqajit::tuning
