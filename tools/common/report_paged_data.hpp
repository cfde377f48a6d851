#pragma once
// What `mqajit report` reads for the decode operator (paged_mqa_logits), joined into one row per
// tuned shape: a decode tuned CSV (the chosen kernel, its time and the baseline's, each the
// geometric mean over the tuner's contexts) and/or the JSON of `mqajit tune --op paged_mqa_logits
// --json-file` or `mqajit bench --op paged_mqa_logits --json-file` (medians per context).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tools/common/report_data.hpp"
#include "tuning_db/shape_keys.hpp"

namespace mqajit::tools {

struct PagedReportRow {
    PagedShapeKey key{};
    std::string kernel{};                 // the tuned choice: a variant name or "baseline"
    std::optional<double> us{};           // its time; nullopt: the JSON did not time it at every context
    std::optional<double> baseline_us{};  // the baseline's, the same way
    std::vector<int> contexts{};          // the contexts timed, ascending; empty without a JSON
    std::vector<std::optional<double>> context_us{};           // the tuned choice's median per context
    std::vector<std::optional<double>> baseline_context_us{};  // the baseline's
};

struct PagedReport {
    std::vector<PagedReportRow> rows{};   // in the order of the CSV, else of the JSON
    std::vector<std::string> skipped{};   // "file:line: why" for malformed CSV rows
    bool from_tuner = false;              // the JSON is `mqajit tune`'s (else `mqajit bench`'s)
};

// Either path may be empty, not both. With the CSV, its rows name the kernels (and with a JSON
// too, the times come from the JSON: geometric means of its medians per context); with a JSON
// alone, the kernel the run chose (bench: the same at every context of a shape, else refused).
// Only rows matching `filter` are kept. Throws Error(invalid_argument) for malformed input or
// when nothing matches.
PagedReport load_paged_report(const std::filesystem::path& tuned_csv, const std::filesystem::path& json,
                              const GroupFilter& filter);

}  // namespace mqajit::tools
