#pragma once
// What `mqajit report` reads: one group of a tuned CSV (arch, cu_num, heads, head_dim, clean_logits,
// logits_dtype) and the
// rows of a bench JSON written by `mqajit bench --json-file` or `mqajit tune --json-file`.

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuning_db/tuned_row.hpp"

namespace mqajit::tools {

// Which group of a tuned table to report; an unset field must be unambiguous in the file.
struct GroupFilter {
    std::optional<std::string> arch{};  // any spelling Arch::parse accepts
    std::optional<int> cu_num{};
    std::optional<int> heads{};
    std::optional<int> head_dim{};
    std::optional<int> clean_logits{};
    std::optional<std::string> logits_dtype{};  // float32 or bfloat16
};

struct TunedTable {
    std::filesystem::path source;
    ShapeKey group;               // seq_len and seq_len_kv are 0
    std::vector<TunedRow> rows{};  // the group's rows, in file order
    std::vector<std::string> skipped{};  // "file:line: why" for malformed rows of the file
};

// Throws Error(not_found) for a missing file, Error(invalid_argument) when no row matches the
// filter or when several groups match and the filter does not say which (the message lists them).
TunedTable load_tuned_table(const std::filesystem::path& csv, const GroupFilter& filter);

// One shape of a bench JSON.
struct BenchRow {
    std::string arch;  // empty in files written before bench recorded it
    int cu_num = 0;
    int heads = 0;
    int head_dim = 0;
    std::int64_t seq_len = 0;
    std::int64_t seq_len_kv = 0;
    int clean_logits = kCleanLogitsWithoutColumn;  // the mode it ran in (files before bench recorded it: 1)
    std::string logits_dtype = "float32";          // what the kernels wrote (files before it was recorded: float32)
    double flops = 0;        // useful FLOPs of the shape (unmasked pairs x 2 x H x D)
    double baseline_us = 0;
    std::map<std::string, double> variants_us;  // every variant timed at the shape
    bool from_tuner = false;            // written by `mqajit tune --json-file` ("tool": "mqajit tune")
    std::set<std::string> probe_only;   // variants the tuner pruned: their time is a short probe's median

    // The time of `kernel` ("baseline" or a variant name) at this shape, if it was timed.
    std::optional<double> time_of(const std::string& kernel) const;
};

// The operator a report's input holds: a tuned CSV's by its header (next_n and batch: decode), a
// JSON file's by its rows' "op" (none: prefill).
enum class ReportOp { prefill, decode };
// Throws Error(not_found) for a missing file, Error(io) for one that cannot be read.
ReportOp tuned_csv_op(const std::filesystem::path& csv);
// Throws Error(invalid_argument) for an unknown op or a file holding both operators' rows.
ReportOp report_json_op(const nlohmann::json& rows, const std::filesystem::path& json);

// The rows of a bench or tune JSON: an array of objects. Throws Error(not_found) for a missing
// file, Error(io) for one that cannot be read, Error(invalid_argument) for anything else.
nlohmann::json read_report_json(const std::filesystem::path& json);

// Reads a bench JSON (an array of prefill rows; decode rows are refused). Throws Error(not_found) for a missing file and
// Error(invalid_argument) naming the row and member for anything malformed.
std::vector<BenchRow> read_bench_json(const std::filesystem::path& json);

}  // namespace mqajit::tools
