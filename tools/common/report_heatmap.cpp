#include "tools/common/report_heatmap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include "tools/common/report_colors.hpp"

namespace mqajit::tools {
namespace {

constexpr int kCellWidth = 150;
constexpr int kCellHeight = 72;
constexpr int kLeft = 100;        // row labels and the seq_len axis title
constexpr int kTop = 100;         // title, subtitle, the seq_len_kv axis title and column labels
constexpr int kLegendGap = 40;
constexpr int kLegendBar = 22;
constexpr int kLegendText = 110;
constexpr const char* kMissingFill = "#c8c8c8";

std::optional<double> speedup_of(const TunedRow& row) {
    if (!row.baseline_us || *row.baseline_us <= 0 || row.us <= 0) return std::nullopt;
    return *row.baseline_us / row.us;
}

std::string default_title(const TunedTable& table) {
    return fmt::format("Tuned {} table ({} SMs, H={}, D={}, clean_logits={}{}) from {}", table.group.arch,
                       table.group.cu_num, table.group.heads, table.group.head_dim, table.group.clean_logits,
                       table.group.logits_dtype == "float32" ? std::string() : ", " + table.group.logits_dtype + " logits",
                       table.source.filename().string());
}

std::string tooltip(const TunedRow& row) {
    std::string text = fmt::format("S={} N={}\n{} {}\n{:.1f} µs", row.key.seq_len, row.key.seq_len_kv, row.backend,
                                   row.variant, row.us);
    if (const auto speedup = speedup_of(row))
        text += fmt::format(", baseline {:.1f} µs: {:.2f}x faster", *row.baseline_us, *speedup);
    else
        text += " (no baseline time recorded)";
    if (!row.runner_up.empty()) text += "\nrunner-up: " + row.runner_up;
    if (!row.date.empty()) text += fmt::format("\n{} {} {}, {}", row.tuner_version, row.compiler_version,
                                               row.driver_version, row.date);
    if (!row.origin.empty()) text += "\nfrom " + row.origin;
    return text;
}

class SvgWriter {
public:
    void add(std::string_view text) { out_ += text; }
    template <typename... Args>
    void add(fmt::format_string<Args...> format, Args&&... args) {
        fmt::format_to(std::back_inserter(out_), format, std::forward<Args>(args)...);
    }
    void text(double x, double y, std::string_view anchor, std::string_view style, std::string_view content) {
        add("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\" {}>{}</text>\n", x, y, anchor, style,
            xml_escape(content));
    }
    std::string take() { return std::move(out_); }

private:
    std::string out_;
};

void write_cell(SvgWriter& svg, int x, int y, const TunedRow* row, const std::optional<SpeedupScale>& scale) {
    const double cx = x + kCellWidth / 2.0;
    if (row == nullptr) {
        svg.add("<g class=\"cell missing\"><title>not in the table</title>\n");
        svg.add("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#ffffff\"/>\n", x, y,
                kCellWidth, kCellHeight, kMissingFill);
        svg.text(cx, y + kCellHeight / 2.0 + 4, "middle", "fill=\"#666666\" font-size=\"11\"", "not tuned");
        svg.add("</g>\n");
        return;
    }
    const std::optional<double> speedup = speedup_of(*row);
    const std::string fill = speedup ? scale->color(*speedup) : "#ffffff";
    const std::string ink = speedup && scale->dark(*speedup) ? "#ffffff" : "#000000";
    svg.add("<g class=\"cell tuned\"><title>{}</title>\n", xml_escape(tooltip(*row)));
    svg.add("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"{}\"{}/>\n", x, y, kCellWidth,
            kCellHeight, fill, speedup ? "#ffffff" : "#888888", speedup ? "" : " stroke-dasharray=\"4 3\"");
    const auto [first, second] = variant_label_lines(row->variant);
    const std::string style = fmt::format("fill=\"{}\" font-size=\"10\"", ink);
    svg.text(cx, y + 15, "middle", style, first);
    svg.text(cx, y + 29, "middle", style, second);
    svg.text(cx, y + 45, "middle", style, fmt::format("{:.1f} µs", row->us));
    svg.text(cx, y + 62, "middle", fmt::format("fill=\"{}\" font-size=\"12\" font-weight=\"bold\"", ink),
             speedup ? fmt::format("{:.2f}x", *speedup) : std::string("no baseline"));
    svg.add("</g>\n");
}

void write_legend(SvgWriter& svg, int x, int y, int height, const std::optional<SpeedupScale>& scale) {
    svg.add("<g class=\"legend\">\n");
    svg.text(x, y - 24, "start", "font-size=\"11\" font-weight=\"bold\"", "speed-up over");
    svg.text(x, y - 10, "start", "font-size=\"11\" font-weight=\"bold\"", "the baseline");
    if (scale) {
        svg.add("<defs><linearGradient id=\"speedup\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n");
        for (int i = 0; i <= 10; ++i)
            svg.add("<stop offset=\"{:.1f}\" stop-color=\"{}\"/>\n", i / 10.0, scale->color_at(i / 10.0));
        svg.add("</linearGradient></defs>\n");
        svg.add("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#speedup)\" stroke=\"#444444\"/>\n", x,
                y, kLegendBar, height);
        for (double tick : scale->ticks()) {
            const double ty = y + height * (1.0 - scale->position(tick));
            svg.add("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#444444\"/>\n", x + kLegendBar, ty,
                    x + kLegendBar + 5, ty);
            svg.text(x + kLegendBar + 8, ty + 4, "start", "class=\"tick\" font-size=\"11\"",
                     fmt::format("{:.2f}x", tick));
        }
    } else {
        svg.text(x, y + 14, "start", "font-size=\"11\"", "no row has a baseline time");
    }
    const int swatches = y + height + 20;
    svg.add("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"14\" fill=\"{}\"/>\n", x, swatches, kLegendBar,
            kMissingFill);
    svg.text(x + kLegendBar + 8, swatches + 11, "start", "font-size=\"11\"", "not tuned");
    svg.add("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"14\" fill=\"#ffffff\" stroke=\"#888888\" "
            "stroke-dasharray=\"4 3\"/>\n",
            x, swatches + 22, kLegendBar);
    svg.text(x + kLegendBar + 8, swatches + 33, "start", "font-size=\"11\"", "no baseline time");
    svg.add("</g>\n");
}

}  // namespace

std::pair<std::string, std::string> variant_label_lines(std::string_view variant) {
    const std::size_t split = variant.find('_');
    if (split == std::string_view::npos) return {std::string(variant), ""};
    std::string rest(variant.substr(split + 1));
    std::replace(rest.begin(), rest.end(), '_', ' ');
    return {std::string(variant.substr(0, split)), rest};
}

std::string xml_escape(std::string_view text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&apos;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string heatmap_svg(const TunedTable& table, const HeatmapOptions& options) {
    // NOTES: a later row of one shape wins, as in the collision rule of the tuning database.
    std::map<std::pair<std::int64_t, std::int64_t>, const TunedRow*> cells;
    std::set<std::int64_t> seq_lens, seq_lens_kv;
    std::optional<double> lowest, highest;
    for (const TunedRow& row : table.rows) {
        cells[{row.key.seq_len, row.key.seq_len_kv}] = &row;
        seq_lens.insert(row.key.seq_len);
        seq_lens_kv.insert(row.key.seq_len_kv);
    }
    for (const auto& [shape, row] : cells) {
        if (const auto s = speedup_of(*row)) {
            lowest = std::min(lowest.value_or(*s), *s);
            highest = std::max(highest.value_or(*s), *s);
        }
    }
    std::optional<SpeedupScale> scale;
    if (lowest) scale.emplace(*lowest, *highest);

    const int grid_width = kCellWidth * static_cast<int>(seq_lens_kv.size());
    const int grid_height = kCellHeight * static_cast<int>(seq_lens.size());
    const int legend_x = kLeft + grid_width + kLegendGap;
    const int legend_height = std::max(grid_height - 60, 160);
    const int width = legend_x + kLegendBar + kLegendText;
    const int height = kTop + std::max(grid_height, legend_height + 80) + 20;
    const std::string title = options.title.empty() ? default_title(table) : options.title;

    SvgWriter svg;
    svg.add("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    svg.add("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
            "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
            width, height, width, height);
    svg.add("<title>{}</title>\n", xml_escape(title));
    svg.add("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    svg.text(12, 24, "start", "font-size=\"16\" font-weight=\"bold\"", title);
    svg.text(12, 44, "start", "font-size=\"12\" fill=\"#333333\"",
             "colour: speed-up of the tuned kernel over the baseline kernel (baseline_us / us); "
             "label: variant, time, speed-up; hover a cell for the full row");
    svg.text(kLeft + grid_width / 2.0, 70, "middle", "font-size=\"12\" font-weight=\"bold\"", "seq_len_kv (N)");
    svg.add("<text transform=\"translate(18 {:.1f}) rotate(-90)\" text-anchor=\"middle\" font-size=\"12\" "
            "font-weight=\"bold\">seq_len (S)</text>\n",
            kTop + grid_height / 2.0);

    int column = 0;
    for (std::int64_t n : seq_lens_kv)
        svg.text(kLeft + kCellWidth * (column++ + 0.5), kTop - 10, "middle", "class=\"column\" font-size=\"12\"",
                 std::to_string(n));
    int row_index = 0;
    for (std::int64_t s : seq_lens) {
        const int y = kTop + kCellHeight * row_index++;
        svg.text(kLeft - 10, y + kCellHeight / 2.0 + 4, "end", "class=\"row\" font-size=\"12\"", std::to_string(s));
        column = 0;
        for (std::int64_t n : seq_lens_kv) {
            const auto it = cells.find({s, n});
            write_cell(svg, kLeft + kCellWidth * column++, y, it == cells.end() ? nullptr : it->second, scale);
        }
    }
    write_legend(svg, legend_x, kTop + 24, legend_height, scale);
    svg.add("</svg>\n");
    return svg.take();
}

}  // namespace mqajit::tools
