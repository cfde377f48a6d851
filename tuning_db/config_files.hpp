#pragma once
// Loading a set of tuning CSVs of one operator into one table. Two files (or two lines) that give
// one key different kernels collide: both places are reported, and the later one wins, "later"
// meaning later in sorted path order (then later in the file), so the result never depends on
// the order files were named in. Identical duplicates are not collisions. Source files are never
// rewritten.
//
// Which operator a CSV belongs to is decided by its file name alone: paged_mqa_logits*.csv are
// the decode table's (AITER's naming: paged_mqa_logits_tuned.csv, model_configs/
// paged_mqa_logits_tuned_<model>.csv), every other name the prefill table's (tuned_mqa_logits.csv,
// model_configs/<model>_tuned_mqa_logits.csv). The shipped files of one operator are never read
// as the other's.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tuning_db/csv.hpp"
#include "tuning_db/tuned_row.hpp"

namespace mqajit::tuning {

template <class Key>
struct CollisionOf {
    Key key;
    TunedRowOf<Key> kept;     // the later row, which wins
    TunedRowOf<Key> dropped;  // the earlier row
    // "gfx950 ... : tuned_mqa_logits.csv:3 says jit X, b.csv:9 says jit Y; using b.csv:9 (later in path order)"
    std::string message() const;
};
using Collision = CollisionOf<ShapeKey>;

template <class Key>
struct ConfigRowsOf {
    std::vector<std::filesystem::path> files;  // in the order they were applied
    std::vector<TunedRowOf<Key>> rows;         // one per key, ordered by key
    std::vector<RowProblem> problems;          // malformed rows (skipped)
    std::vector<CollisionOf<Key>> collisions;
};
using ConfigRows = ConfigRowsOf<ShapeKey>;

// The order files are applied in: sorted by path, duplicates removed.
std::vector<std::filesystem::path> sorted_config_order(std::vector<std::filesystem::path> files);

// Reads the files in sorted_config_order as tables of Key's operator and merges them. Throws
// mqajit::Error(io) when a file cannot be read.
template <class Key = ShapeKey>
ConfigRowsOf<Key> load_config_files(const std::vector<std::filesystem::path>& files);

// Merges already-parsed tables in the given order (later wins).
template <class Key = ShapeKey>
ConfigRowsOf<Key> merge_tables(const std::vector<CsvRowsOf<Key>>& tables);

// The operator ("mqa_logits", "paged_mqa_logits") a CSV of this name belongs to.
std::string_view config_file_op(const std::filesystem::path& file);
// Whether the name is one of Key's shipped tuned tables (its op, prefix and suffix).
template <class Key>
bool is_tuned_config_name(const std::filesystem::path& file);
// The same for any operator's table; `files` keeps those of Key's operator.
template <class Key>
std::vector<std::filesystem::path> files_of_op(const std::vector<std::filesystem::path>& files);

// The tuned CSVs of Key's operator shipped in a configs folder and its model_configs/.
template <class Key = ShapeKey>
std::vector<std::filesystem::path> shipped_config_files(const std::filesystem::path& configs_dir);

}  // namespace mqajit::tuning
