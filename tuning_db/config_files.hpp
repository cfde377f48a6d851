#pragma once
// Loading a set of tuning CSVs into one table. Two files (or two lines) that give one shape key
// different kernels collide: both places are reported, and the later one wins, "later" meaning
// later in sorted path order (then later in the file), so the result never depends on the order
// files were named in. Identical duplicates are not collisions. Source files are never rewritten.

#include <filesystem>
#include <string>
#include <vector>

#include "tuning_db/csv.hpp"
#include "tuning_db/tuned_row.hpp"

namespace mqajit::tuning {

struct Collision {
    ShapeKey key;
    TunedRow kept;     // the later row, which wins
    TunedRow dropped;  // the earlier row
    // "gfx950 ... : tuned_mqa_logits.csv:3 says jit X, b.csv:9 says jit Y; using b.csv:9 (later in path order)"
    std::string message() const;
};

struct ConfigRows {
    std::vector<std::filesystem::path> files;  // in the order they were applied
    std::vector<TunedRow> rows;                // one per shape key, ordered by key
    std::vector<RowProblem> problems;          // malformed rows (skipped)
    std::vector<Collision> collisions;
};

// The order files are applied in: sorted by path, duplicates removed.
std::vector<std::filesystem::path> sorted_config_order(std::vector<std::filesystem::path> files);

// Reads the files in sorted_config_order and merges them. Throws mqajit::Error(io) when a file
// cannot be read.
ConfigRows load_config_files(const std::vector<std::filesystem::path>& files);

// Merges already-parsed tables in the given order (later wins).
ConfigRows merge_tables(const std::vector<CsvRows>& tables);

// The CSVs shipped in a configs folder: tuned_mqa_logits.csv and model_configs/*_tuned_mqa_logits.csv.
std::vector<std::filesystem::path> shipped_config_files(const std::filesystem::path& configs_dir);

}  // namespace mqajit::tuning
