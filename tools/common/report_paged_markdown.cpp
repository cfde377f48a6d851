#include "tools/common/report_paged_markdown.hpp"

#include <fmt/format.h>

#include <iterator>
#include <map>
#include <set>
#include <tuple>

#include "tools/common/report_compare.hpp"  // geometric_mean

namespace mqajit::tools {
namespace {

// The table a row belongs to, in the order tables are printed.
using TableKey = std::tuple<std::string, int, int, int, int, int, int>;
TableKey table_of(const PagedShapeKey& k) {
    return {k.arch, k.cu_num, k.heads, k.next_n, k.head_dim, k.block_kv, k.clean_logits};
}

std::string us_text(const std::optional<double>& us) { return us ? fmt::format("{:.1f}", *us) : "-"; }

std::string sources_line(const PagedReport& report, const std::string& tuned_source, const std::string& json_source) {
    const std::string run = report.from_tuner ? "mqajit tune --op paged_mqa_logits --json-file"
                                              : "mqajit bench --op paged_mqa_logits --json-file";
    if (json_source.empty())
        return fmt::format("Decode (paged_mqa_logits) tuned table `{}`: the tuner's times, each the geometric mean of "
                           "its medians over the shape's contexts.\n",
                           tuned_source);
    if (tuned_source.empty())
        return fmt::format("Decode (paged_mqa_logits) times from one `{}` run, `{}`: the tuned choice is the run's; "
                           "µs columns are geometric means over the contexts, a context's column the medians there "
                           "(tuned / baseline).\n",
                           run, json_source);
    return fmt::format("Decode (paged_mqa_logits) tuned table `{}`, times from one `{}` run, `{}`: µs columns are "
                       "geometric means of the run's medians over the contexts, a context's column the medians there "
                       "(tuned / baseline).\n",
                       tuned_source, run, json_source);
}

}  // namespace

std::string paged_markdown_report(const PagedReport& report, const std::string& tuned_source,
                                  const std::string& json_source) {
    std::string out = sources_line(report, tuned_source, json_source);
    auto line = std::back_inserter(out);
    std::map<TableKey, std::map<std::int64_t, const PagedReportRow*>> tables;
    for (const PagedReportRow& row : report.rows) tables[table_of(row.key)][row.key.batch] = &row;

    std::size_t untimed = 0, without_baseline = 0;
    for (const auto& [table, rows] : tables) {
        const auto& [arch, cu_num, heads, next_n, head_dim, block_kv, clean_logits] = table;
        std::set<int> contexts;
        for (const auto& [batch, row] : rows) contexts.insert(row->contexts.begin(), row->contexts.end());
        fmt::format_to(line, "\n#### {}, {} SMs, H={}, next_n={} (D={}, block_kv={}, clean_logits={})\n\n", arch,
                       cu_num, heads, next_n, head_dim, block_kv, clean_logits);
        fmt::format_to(line, "| batch | tuned choice | tuned µs | baseline µs | tuned vs baseline |");
        for (int context : contexts) fmt::format_to(line, " µs at {} |", context);
        fmt::format_to(line, "\n|---|---|---|---|---|");
        for (std::size_t i = 0; i < contexts.size(); ++i) fmt::format_to(line, "---|");
        fmt::format_to(line, "\n");
        std::vector<double> speedups;
        for (const auto& [batch, row] : rows) {
            std::string speedup;
            if (row->us && row->baseline_us) {
                speedups.push_back(*row->baseline_us / *row->us);
                speedup = fmt::format("{:.2f}x", speedups.back());
            }
            untimed += row->us ? 0 : 1;
            without_baseline += row->baseline_us ? 0 : 1;
            fmt::format_to(line, "| {} | `{}` | {} | {} | {} |", batch, row->kernel, us_text(row->us),
                           us_text(row->baseline_us), speedup);
            for (int context : contexts) {
                std::string cell;
                for (std::size_t i = 0; i < row->contexts.size(); ++i) {
                    if (row->contexts[i] == context)
                        cell = fmt::format("{} / {}", us_text(row->context_us[i]), us_text(row->baseline_context_us[i]));
                }
                fmt::format_to(line, " {} |", cell);
            }
            fmt::format_to(line, "\n");
        }
        if (!speedups.empty()) {
            fmt::format_to(line, "| geometric mean ({} batches) | | | | {:.2f}x |", speedups.size(),
                           geometric_mean(speedups));
            for (std::size_t i = 0; i < contexts.size(); ++i) fmt::format_to(line, " |");
            fmt::format_to(line, "\n");
        }
    }
    if (untimed + without_baseline > 0) {
        fmt::format_to(line, "\n{} row(s) have no time for the tuned choice and {} none for the baseline (`-`: not "
                             "timed at every context, or not in the run); the geometric means leave them out.\n",
                       untimed, without_baseline);
    }
    return out;
}

}  // namespace mqajit::tools
