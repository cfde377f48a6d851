#pragma once
// What `mqajit db check` looks for: malformed CSV rows (bad counts, numbers, backends, variant
// names that do not parse), collisions between files, and user-database rows that would be
// rejected today (a variant name the grammar no longer accepts, say).

#include <filesystem>
#include <string>
#include <vector>

#include "tuning_db/config_files.hpp"
#include "tuning_db/csv.hpp"

namespace mqajit::tuning {

struct CheckReport {
    std::vector<std::filesystem::path> files;  // CSVs checked, in sorted order
    std::size_t num_rows = 0;                  // rows checked (CSV rows after merging, plus user rows)
    std::vector<RowProblem> problems;
    std::vector<Collision> collisions;

    bool ok() const { return problems.empty() && collisions.empty(); }
};

// Loads the CSVs as the system-database build would. Throws mqajit::Error(io) for an unreadable file.
CheckReport check_config_files(const std::vector<std::filesystem::path>& files);

// Adds a problem for each row that row_problem rejects; its place is the row's origin and key.
void check_rows(const std::vector<TunedRow>& rows, CheckReport& report);

}  // namespace mqajit::tuning
