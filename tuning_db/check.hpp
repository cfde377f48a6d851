#pragma once
// What `mqajit db check` looks for: malformed CSV rows (bad counts, numbers, backends, variant
// names that do not parse), rows whose variant cannot run where they say (an mfma variant on an
// sm_90a row, a variant the rules refuse at the row's key), collisions between files, and
// user-database rows that would be rejected today. For each operator's table.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tuning_db/config_files.hpp"
#include "tuning_db/csv.hpp"

namespace mqajit::tuning {

template <class Key>
struct CheckReportOf {
    std::vector<std::filesystem::path> files;  // CSVs checked, in sorted order
    std::size_t num_rows = 0;                  // rows checked (CSV rows after merging, plus user rows)
    std::vector<RowProblem> problems;
    std::vector<CollisionOf<Key>> collisions;

    bool ok() const { return problems.empty() && collisions.empty(); }
};
using CheckReport = CheckReportOf<ShapeKey>;

// Loads the CSVs as Key's tables, as the system-database build would. Throws mqajit::Error(io)
// for an unreadable file.
template <class Key = ShapeKey>
CheckReportOf<Key> check_config_files(const std::vector<std::filesystem::path>& files);

// Adds a problem for each row that row_problem or unrunnable_problem rejects; its place is the
// row's origin and key.
template <class Key>
void check_rows(const std::vector<TunedRowOf<Key>>& rows, CheckReportOf<Key>& report);

// Why the row's variant cannot run where its key says, in the variant rules' words: for
// mqa_logits the registry's rules on the row's arch at its heads and head_dim; for
// paged_mqa_logits the decode families' rules (codegen/paged_variant_support.hpp) at its heads, head_dim, next_n
// and block_kv; for mqa_topk the rules of the twgmma family or (an unfused row) the mqa_logits
// registry's, at its heads and head_dim. nullopt when it can, and for a baseline row (the pre-built kernel runs on every
// arch mqajit knows). Needs no GPU.
std::optional<std::string> unrunnable_problem(const TunedRow& row);
std::optional<std::string> unrunnable_problem(const PagedTunedRow& row);
std::optional<std::string> unrunnable_problem(const TopkTunedRow& row);

// Moves the rows that unrunnable_problem rejects out of `rows` into `problems` (place: the row's
// origin), so they are reported and skipped like malformed rows.
template <class Key>
void drop_unrunnable(std::vector<TunedRowOf<Key>>& rows, std::vector<RowProblem>& problems);

}  // namespace mqajit::tuning
