#pragma once
// What `mqajit db check` looks for: malformed CSV rows (bad counts, numbers, backends, variant
// names that do not parse), rows whose variant cannot run where they say (an mfma variant on an
// sm_90a row, a variant the registry rules out at the row's heads and head_dim), collisions
// between files, and user-database rows that would be rejected today.

#include <filesystem>
#include <optional>
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

// Adds a problem for each row that row_problem or unrunnable_problem rejects; its place is the
// row's origin and key.
void check_rows(const std::vector<TunedRow>& rows, CheckReport& report);

// Why the row's variant cannot run on the row's arch at its heads and head_dim, in the variant
// registry's words; nullopt when it can, and for a baseline row (the pre-built kernel runs on
// every arch mqajit knows). Needs no GPU.
std::optional<std::string> unrunnable_problem(const TunedRow& row);

// Moves the rows that unrunnable_problem rejects out of `rows` into `problems` (place: the row's
// origin), so they are reported and skipped like malformed rows.
void drop_unrunnable(std::vector<TunedRow>& rows, std::vector<RowProblem>& problems);

}  // namespace mqajit::tuning
