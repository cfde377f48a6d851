#include "tools/common/report_markdown.hpp"

#include <fmt/format.h>

#include <iterator>

namespace mqajit::tools {
namespace {

std::string us_text(double us) { return fmt::format("{:.1f}", us); }
std::string tflops_text(double tflops) { return fmt::format("{:.0f}", tflops); }
std::string ratio_text(double ratio) { return fmt::format("{:.2f}x", ratio); }

}  // namespace

std::string markdown_report(const TuningComparison& c, const std::string& tuned_source,
                            const std::string& bench_source) {
    std::string out;
    auto line = std::back_inserter(out);
    fmt::format_to(line, "Tuned table `{}` ({}, {} SMs, H={}, D={}, clean_logits={}, {} logits); times from one `{}` run, `{}`.\n",
                   tuned_source, c.group.arch, c.group.cu_num, c.group.heads, c.group.head_dim, c.group.clean_logits,
                   c.group.logits_dtype,
                   c.from_tuner ? "mqajit tune --json-file" : "mqajit bench --variant all", bench_source);
    fmt::format_to(line, "Best fixed variant: `{}`, the lowest geometric-mean time over the {} shapes among the {} "
                         "variants timed at all of them.\n\n",
                   c.best_fixed, c.shapes.size(), c.num_fixed_candidates);
    fmt::format_to(line, "| S | N | tuned choice | tuned µs | tuned TFLOP/s | baseline µs | baseline TFLOP/s | "
                         "best fixed µs | best fixed TFLOP/s | tuned vs baseline | tuned vs best fixed |\n");
    fmt::format_to(line, "|---|---|---|---|---|---|---|---|---|---|---|\n");
    std::size_t untimed = 0;
    for (const ShapeComparison& s : c.shapes) {
        std::string tuned = "not tuned", tuned_us = "", tuned_tflops = "", over_baseline = "", over_fixed = "";
        if (!s.tuned_kernel.empty()) tuned = fmt::format("`{}`", s.tuned_kernel);
        if (s.tuned_us) {
            tuned_us = us_text(*s.tuned_us);
            tuned_tflops = tflops_text(s.tflops(*s.tuned_us));
            over_baseline = ratio_text(s.baseline_us / *s.tuned_us);
            over_fixed = ratio_text(s.best_fixed_us / *s.tuned_us);
        } else if (!s.tuned_kernel.empty()) {
            tuned_us = "not timed";
            ++untimed;
        }
        fmt::format_to(line, "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", s.seq_len, s.seq_len_kv,
                       tuned, tuned_us, tuned_tflops, us_text(s.baseline_us), tflops_text(s.tflops(s.baseline_us)),
                       us_text(s.best_fixed_us), tflops_text(s.tflops(s.best_fixed_us)), over_baseline, over_fixed);
    }
    const GeometricMeans& m = c.means;
    if (m.num_shapes > 0) {
        fmt::format_to(line, "| geometric mean ({} shapes) | | | | {} | | {} | | {} | {} | {} |\n", m.num_shapes,
                       tflops_text(m.tuned_tflops), tflops_text(m.baseline_tflops), tflops_text(m.best_fixed_tflops),
                       ratio_text(m.speedup_over_baseline), ratio_text(m.speedup_over_best_fixed));
    }
    if (c.from_tuner) {
        fmt::format_to(line, "\nTimes are the tuner's medians. A candidate the tuner pruned (its short probe was more "
                             "than the prune factor times the best time so far) was not timed in full: its probe "
                             "median counts as its time. The best fixed variant's time is such a probe median at {} "
                             "shape(s).\n",
                       c.best_fixed_probe_times);
    }
    const std::size_t untuned = c.shapes.size() - m.num_shapes - untimed;
    if (untuned + untimed > 0) {
        fmt::format_to(line, "\nThe geometric means leave out {} shape(s) the table does not tune and {} whose tuned "
                             "kernel the bench run did not time.\n",
                       untuned, untimed);
    }
    return out;
}

}  // namespace mqajit::tools
