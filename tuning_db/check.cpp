#include "tuning_db/check.hpp"

#include <fmt/format.h>

namespace mqajit::tuning {

CheckReport check_config_files(const std::vector<std::filesystem::path>& files) {
    ConfigRows loaded = load_config_files(files);
    CheckReport report;
    report.files = std::move(loaded.files);
    report.num_rows = loaded.rows.size();
    report.problems = std::move(loaded.problems);
    report.collisions = std::move(loaded.collisions);
    return report;
}

void check_rows(const std::vector<TunedRow>& rows, CheckReport& report) {
    report.num_rows += rows.size();
    for (const TunedRow& row : rows) {
        if (auto problem = row_problem(row))
            report.problems.push_back({fmt::format("{} ({})", row.origin, to_string(row.key)), *problem});
    }
}

}  // namespace mqajit::tuning
