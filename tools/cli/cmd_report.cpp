// mqajit report --tuned FILE.csv -o report.svg: an SVG heat map of one tuned table.
// mqajit report --tuned FILE.csv --bench run.json --markdown [FILE]: the per-shape table of
// docs/PERFORMANCE.md (tuned choice vs the baseline kernel vs the best fixed variant).
// Neither needs a GPU.

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/check.hpp"
#include "core/files.hpp"
#include "tools/cli/commands.hpp"
#include "tools/common/report_compare.hpp"
#include "tools/common/report_heatmap.hpp"
#include "tools/common/report_markdown.hpp"

namespace mqajit::cli {
namespace {

struct ReportOptions {
    std::string tuned, bench, svg, markdown, title;
    tools::GroupFilter filter;
};

void write_text_file(const std::filesystem::path& path, const std::string& text) {
    std::error_code error;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), error);
    MQAJIT_CHECK_KIND(io, !error, "cannot create folder {}: {}", path.parent_path().string(), error.message());
    write_file_atomically(path, text);
}

void run_report(const ReportOptions& o) {
    MQAJIT_CHECK(!o.svg.empty() || !o.markdown.empty(), "say what to write: -o report.svg and/or --markdown [FILE]");
    MQAJIT_CHECK(o.markdown.empty() || !o.bench.empty(),
                 "--markdown needs --bench FILE.json from `mqajit bench --variant all --json-file FILE.json`");
    const tools::TunedTable table = tools::load_tuned_table(o.tuned, o.filter);
    for (const std::string& skipped : table.skipped) std::fprintf(stderr, "skipped %s\n", skipped.c_str());
    if (!o.svg.empty()) {
        write_text_file(o.svg, tools::heatmap_svg(table, tools::HeatmapOptions{.title = o.title}));
        std::fprintf(stderr, "wrote %s: %zu tuned shapes of %s (%d SMs, H=%d, D=%d, clean_logits=%d)\n",
                     o.svg.c_str(), table.rows.size(), table.group.arch.c_str(), table.group.cu_num,
                     table.group.heads, table.group.head_dim, table.group.clean_logits);
    }
    if (!o.markdown.empty()) {
        const tools::TuningComparison comparison = tools::compare_tuning(table, tools::read_bench_json(o.bench));
        const std::string text = tools::markdown_report(comparison, o.tuned, o.bench);
        if (o.markdown == "-") {
            fmt::print("{}", text);
        } else {
            write_text_file(o.markdown, text);
        }
    }
}

}  // namespace

void add_report_command(CLI::App& app, CommandContext& context) {
    auto options = std::make_shared<ReportOptions>();
    CLI::App* command =
        app.add_subcommand("report", "Draw a tuned table as an SVG heat map, or tabulate tuning's gain in markdown");
    command->add_option("--tuned", options->tuned, "Tuned CSV (e.g. tuning_db/configs/model_configs/glm5_tuned_mqa_logits.csv)")
        ->required();
    command->add_option("-o,--output", options->svg, "SVG heat map to write");
    command->add_option("--bench", options->bench, "JSON from `mqajit bench --variant all --json-file` (for --markdown)");
    CLI::Option* markdown =
        command->add_option("--markdown", options->markdown, "Write the per-shape markdown table to FILE (default: stdout)")
            ->expected(0, 1);
    command->add_option("--title", options->title, "The SVG's title (default: the table and its file name)");
    command->add_option("--arch", options->filter.arch, "Which arch's rows (needed when the file has several)");
    command->add_option("--cu-num", options->filter.cu_num, "Which SM/CU count's rows (when the file has several)");
    command->add_option("--heads", options->filter.heads, "Which heads' rows (when the file has several)");
    command->add_option("--head-dim", options->filter.head_dim, "Which head_dim's rows (when the file has several)");
    command->add_option("--clean-logits", options->filter.clean_logits,
                        "Which mode's rows, 0 or 1 (when the file has both)")
        ->check(CLI::IsMember({0, 1}));
    command->callback([options, markdown, &context] {
        if (markdown->count() > 0 && options->markdown.empty()) options->markdown = "-";
        run_report(*options);
        context.exit_code = kOk;
    });
}

}  // namespace mqajit::cli
