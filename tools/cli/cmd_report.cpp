// mqajit report --tuned FILE.csv -o report.svg: an SVG heat map of one tuned table.
// mqajit report --tuned FILE.csv --bench run.json --markdown [FILE]: the per-shape table of
// docs/PERFORMANCE.md (tuned choice vs the baseline kernel vs the best fixed variant).
// For the decode op (a decode tuned CSV and/or the JSON of `mqajit tune|bench --op paged_mqa_logits
// --json-file`), --markdown writes one table per heads and next_n, a row per batch. Neither needs a GPU.

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>

#include "core/check.hpp"
#include "core/files.hpp"
#include "tools/cli/commands.hpp"
#include "tools/common/report_compare.hpp"
#include "tools/common/report_heatmap.hpp"
#include "tools/common/report_markdown.hpp"
#include "tools/common/report_paged_markdown.hpp"

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

// Which operator the inputs hold; they must agree.
tools::ReportOp input_op(const ReportOptions& o) {
    std::optional<tools::ReportOp> tuned, bench;
    if (!o.tuned.empty()) tuned = tools::tuned_csv_op(o.tuned);
    if (!o.bench.empty()) {
        const nlohmann::json rows = tools::read_report_json(o.bench);
        if (!rows.empty()) bench = tools::report_json_op(rows, o.bench);
    }
    auto name = [](tools::ReportOp op) { return op == tools::ReportOp::decode ? "decode (paged_mqa_logits)"
                                                                              : "prefill (mqa_logits)"; };
    MQAJIT_CHECK(!tuned || !bench || *tuned == *bench, "--tuned {} is a {} table but --bench {} holds {} rows; a "
                 "report covers one operator: give both files of one", o.tuned, name(*tuned), o.bench, name(*bench));
    return tuned.value_or(bench.value_or(tools::ReportOp::prefill));
}

void print_markdown(const std::string& destination, const std::string& text) {
    if (destination == "-") {
        fmt::print("{}", text);
    } else {
        write_text_file(destination, text);
    }
}

void run_paged_report(const ReportOptions& o) {
    MQAJIT_CHECK(o.svg.empty(), "-o draws the heat map of a prefill table (seq_len x seq_len_kv); for decode input "
                 "write the per-batch tables with --markdown [FILE]");
    const tools::PagedReport report = tools::load_paged_report(o.tuned, o.bench, o.filter);
    for (const std::string& skipped : report.skipped) std::fprintf(stderr, "skipped %s\n", skipped.c_str());
    print_markdown(o.markdown, tools::paged_markdown_report(report, o.tuned, o.bench));
}

void run_report(const ReportOptions& o) {
    MQAJIT_CHECK(!o.tuned.empty() || !o.bench.empty(), "give --tuned FILE.csv (and --bench FILE.json for --markdown)");
    MQAJIT_CHECK(!o.svg.empty() || !o.markdown.empty(), "say what to write: -o report.svg and/or --markdown [FILE]");
    for (const std::string& output : {o.svg, o.markdown}) {
        if (!output.empty() && output != "-") require_distinct_output(output, {o.tuned, o.bench});
    }
    if (input_op(o) == tools::ReportOp::decode) return run_paged_report(o);
    MQAJIT_CHECK(!o.tuned.empty(), "a prefill report needs --tuned FILE.csv, the tuned table");
    MQAJIT_CHECK(o.markdown.empty() || !o.bench.empty(),
                 "--markdown needs --bench FILE.json from `mqajit bench --variant all --json-file FILE.json`");
    const tools::TunedTable table = tools::load_tuned_table(o.tuned, o.filter);
    for (const std::string& skipped : table.skipped) std::fprintf(stderr, "skipped %s\n", skipped.c_str());
    if (!o.svg.empty()) {
        write_text_file(o.svg, tools::heatmap_svg(table, tools::HeatmapOptions{.title = o.title}));
        std::fprintf(stderr, "wrote %s: %zu tuned shapes of %s (%d SMs, H=%d, D=%d, clean_logits=%d, %s logits)\n",
                     o.svg.c_str(), table.rows.size(), table.group.arch.c_str(), table.group.cu_num,
                     table.group.heads, table.group.head_dim, table.group.clean_logits,
                     table.group.logits_dtype.c_str());
    }
    if (!o.markdown.empty()) {
        const tools::TuningComparison comparison = tools::compare_tuning(table, tools::read_bench_json(o.bench));
        print_markdown(o.markdown, tools::markdown_report(comparison, o.tuned, o.bench));
    }
}

}  // namespace

void add_report_command(CLI::App& app, CommandContext& context) {
    auto options = std::make_shared<ReportOptions>();
    CLI::App* command =
        app.add_subcommand("report", "Draw a tuned table as an SVG heat map, or tabulate tuning's gain in markdown");
    command->add_option("--tuned", options->tuned,
                        "Tuned CSV, prefill (e.g. tuning_db/configs/model_configs/glm5_tuned_mqa_logits.csv) or decode");
    command->add_option("-o,--output", options->svg, "SVG heat map to write");
    command->add_option("--bench", options->bench, "JSON from `mqajit bench --variant all --json-file` or `mqajit tune --json-file` (for --markdown; "
                        "decode: `--op paged_mqa_logits`, with or without --tuned)");
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
    command->add_option("--logits-dtype", options->filter.logits_dtype,
                        "Which logits dtype's rows, float32 or bfloat16 (when the file has both)")
        ->check(CLI::IsMember({"float32", "bfloat16"}));
    command->callback([options, markdown, &context] {
        if (markdown->count() > 0 && options->markdown.empty()) options->markdown = "-";
        run_report(*options);
        context.exit_code = kOk;
    });
}

}  // namespace mqajit::cli
