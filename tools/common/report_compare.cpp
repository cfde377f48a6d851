#include "tools/common/report_compare.hpp"

#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "core/check.hpp"

namespace mqajit::tools {
namespace {

bool in_group(const BenchRow& row, const ShapeKey& group) {
    return row.heads == group.heads && row.head_dim == group.head_dim && row.clean_logits == group.clean_logits &&
           row.logits_dtype == group.logits_dtype &&
           (row.arch.empty() || row.arch == group.arch) && (row.cu_num == 0 || row.cu_num == group.cu_num);
}

// The variant with the lowest geometric-mean time over `rows`, among those timed at every row.
std::pair<std::string, std::size_t> best_fixed_variant(const std::vector<const BenchRow*>& rows) {
    std::set<std::string> everywhere;
    for (const auto& [name, us] : rows.front()->variants_us) everywhere.insert(name);
    for (const BenchRow* row : rows)
        std::erase_if(everywhere, [&](const std::string& name) { return !row->variants_us.contains(name); });
    MQAJIT_CHECK(!everywhere.empty(),
                 "no variant was timed at every shape of the bench file; run `mqajit bench --variant all "
                 "--json-file FILE` so each shape times every variant");
    std::string best;
    double best_mean = std::numeric_limits<double>::infinity();
    for (const std::string& name : everywhere) {
        std::vector<double> times;
        for (const BenchRow* row : rows) times.push_back(row->variants_us.at(name));
        const double mean = geometric_mean(times);
        if (mean < best_mean) {
            best_mean = mean;
            best = name;
        }
    }
    return {best, everywhere.size()};
}

}  // namespace

double geometric_mean(const std::vector<double>& values) {
    if (values.empty()) return 0.0;
    double log_sum = 0;
    for (double v : values) log_sum += std::log(v);
    return std::exp(log_sum / static_cast<double>(values.size()));
}

TuningComparison compare_tuning(const TunedTable& table, const std::vector<BenchRow>& bench) {
    const ShapeKey& group = table.group;
    std::vector<const BenchRow*> rows;
    std::set<std::pair<std::int64_t, std::int64_t>> seen;
    for (const BenchRow& row : bench) {
        if (!in_group(row, group)) continue;
        MQAJIT_CHECK(seen.emplace(row.seq_len, row.seq_len_kv).second,
                     "the bench file times S={} N={} twice; give it one run per shape", row.seq_len, row.seq_len_kv);
        rows.push_back(&row);
    }
    MQAJIT_CHECK(!rows.empty(), "the bench file has no rows for {} with {} SMs at H={} D={} clean_logits={} "
                 "logits_dtype={}; bench that table's shapes in its mode", group.arch, group.cu_num, group.heads,
                 group.head_dim, group.clean_logits, group.logits_dtype);

    TuningComparison result{.group = group};
    std::tie(result.best_fixed, result.num_fixed_candidates) = best_fixed_variant(rows);

    std::vector<double> tuned_tflops, baseline_tflops, fixed_tflops, over_baseline, over_fixed;
    for (const BenchRow* row : rows) {
        result.from_tuner = result.from_tuner || row->from_tuner;
        if (row->probe_only.contains(result.best_fixed)) ++result.best_fixed_probe_times;
        ShapeComparison shape{.seq_len = row->seq_len, .seq_len_kv = row->seq_len_kv, .flops = row->flops,
                              .baseline_us = row->baseline_us, .best_fixed_us = row->variants_us.at(result.best_fixed)};
        for (const TunedRow& tuned : table.rows) {
            if (tuned.key.seq_len != row->seq_len || tuned.key.seq_len_kv != row->seq_len_kv) continue;
            shape.tuned_kernel = tuned.backend == kBackendBaseline ? "baseline" : tuned.variant;
            shape.tuned_us = row->time_of(shape.tuned_kernel);
        }
        if (shape.tuned_us) {
            tuned_tflops.push_back(shape.tflops(*shape.tuned_us));
            baseline_tflops.push_back(shape.tflops(shape.baseline_us));
            fixed_tflops.push_back(shape.tflops(shape.best_fixed_us));
            over_baseline.push_back(shape.baseline_us / *shape.tuned_us);
            over_fixed.push_back(shape.best_fixed_us / *shape.tuned_us);
        }
        result.shapes.push_back(std::move(shape));
    }
    result.means = GeometricMeans{.num_shapes = tuned_tflops.size(),
                                  .tuned_tflops = geometric_mean(tuned_tflops),
                                  .baseline_tflops = geometric_mean(baseline_tflops),
                                  .best_fixed_tflops = geometric_mean(fixed_tflops),
                                  .speedup_over_baseline = geometric_mean(over_baseline),
                                  .speedup_over_best_fixed = geometric_mean(over_fixed)};
    return result;
}

}  // namespace mqajit::tools
