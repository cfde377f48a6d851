#pragma once
// The per-shape markdown table of `mqajit report --markdown`, for docs/PERFORMANCE.md.

#include <string>

#include "tools/common/report_compare.hpp"

namespace mqajit::tools {

// `tuned_source` and `bench_source` name the files in the lines above the table.
std::string markdown_report(const TuningComparison& comparison, const std::string& tuned_source,
                            const std::string& bench_source);

}  // namespace mqajit::tools
