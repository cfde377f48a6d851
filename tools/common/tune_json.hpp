#pragma once
// `mqajit tune --json-file FILE`: one row per tuned shape in the layout `mqajit bench --json-file`
// writes, so `mqajit report --bench FILE --markdown` reads the tuner's run directly, plus every
// candidate's outcome. A rerun keeps the file's other rows (a retuned shape replaces its row), and
// the parts written by `--devices` workers merge into it the same way.

#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/common/paged_tuner.hpp"
#include "tools/common/shapes.hpp"
#include "tools/common/topk_tuner.hpp"
#include "tools/common/tuner.hpp"

namespace mqajit::tools {

// The row of one finished shape. `variants_us` holds every verified variant's median (a pruned
// one's probe median, its name also listed in `pruned`); `candidates` lists every candidate with
// its outcome: verified or rejected with the reason, pruned or not, median and runs.
nlohmann::json tune_json_row(const ShapeResult& result, const TuneSettings& settings);

// The row of one finished decode shape: its key, contexts, winner and time (the geometric mean
// over the contexts), the baseline's, each context's bytes floor, and every candidate's outcome
// with its median per context (`context_us`, in the order of `contexts`).
nlohmann::json paged_tune_json_row(const PagedShapeResult& result, const TuneSettings& settings);

// The row of one finished mqa_topk shape: its key, winner and time, the baseline's, and every
// candidate's outcome.
nlohmann::json topk_tune_json_row(const TopkShapeResult& result, const TuneSettings& settings);

// A row's key from its members named as Key's columns, each checked (a string, or a whole number
// that fits; an absent one is empty or 0, an absent prefill clean_logits 1). Throws
// Error(invalid_argument) naming `what` (the file and row).
template <class Key>
Key tune_json_key(const nlohmann::json& row, const std::string& what);

// The rows of a tune JSON file: an empty array when the file does not exist. Throws
// Error(invalid_argument) when it is not an array of objects.
nlohmann::json read_tune_json(const std::filesystem::path& path);

// Writes `rows` beside `path` and renames the file into place. Throws Error(io) on failure.
void write_tune_json(const std::filesystem::path& path, const nlohmann::json& rows);

// The rows of `base` then of `updates`; each replaces an earlier row of its key (Key's columns:
// for mqa_logits arch, cu_num, heads, head_dim, clean_logits, seq_len, seq_len_kv, a row without
// clean_logits being a clean_logits=1 row) in place or is appended. Nothing else is dropped.
template <class Key = ShapeKey>
nlohmann::json merge_tune_json(const nlohmann::json& base, const nlohmann::json& updates);

// For each shape in order, the last of `rows` that tunes it (as rows_for_shapes picks CSV rows).
nlohmann::json tune_json_for_shapes(const nlohmann::json& rows, const std::vector<BenchShape>& shapes);

// Merges the `--devices` workers' JSON files (`parts`; a missing one counts as empty) into `file`:
// its rows are kept, a retuned shape replaces its row in place, new rows follow in the order of
// `shapes`. Returns how many rows the parts gave for `shapes`; `file` is not written when none.
std::size_t merge_tune_json_parts(const std::filesystem::path& file, const std::vector<std::filesystem::path>& parts,
                                  const std::vector<BenchShape>& shapes);

}  // namespace mqajit::tools
