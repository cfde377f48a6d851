#pragma once
// The decode markdown of `mqajit report --markdown`: one table per (arch, SMs, heads, next_n,
// head_dim, block_kv, mode), a row per batch with the tuned choice, its time, the baseline's, the
// speed-up and, where a JSON gave them, both medians at each context.

#include <string>

#include "tools/common/report_paged_data.hpp"

namespace mqajit::tools {

// `tuned_source` and `json_source` (either may be empty) name the files in the line above the tables.
std::string paged_markdown_report(const PagedReport& report, const std::string& tuned_source,
                                  const std::string& json_source);

}  // namespace mqajit::tools
