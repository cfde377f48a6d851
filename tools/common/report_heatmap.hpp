#pragma once
// `mqajit report`'s picture: an SVG heat map of one tuned table, written as plain text. Rows are
// seq_len, columns seq_len_kv; a tuned cell is coloured by its speed-up over the baseline kernel
// (baseline_us / us) and labelled with its variant and time, the full row in a <title> tooltip;
// a (seq_len, seq_len_kv) pair the table does not tune is grey.

#include <string>
#include <string_view>
#include <utility>

#include "tools/common/report_data.hpp"

namespace mqajit::tools {

struct HeatmapOptions {
    std::string title;  // empty: "Tuned <arch> table (<cu_num> SMs, H, D) from <file>"
};

std::string heatmap_svg(const TunedTable& table, const HeatmapOptions& options);

// A variant name as two label lines: "wgmma64x128x32" and "bkv64 r4 w4 lds4"; "baseline" and
// other names without '_' stay whole on the first line.
std::pair<std::string, std::string> variant_label_lines(std::string_view variant);

// Escapes &, <, >, " and ' for SVG text and attributes.
std::string xml_escape(std::string_view text);

}  // namespace mqajit::tools
