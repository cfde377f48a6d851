#pragma once
// The numbers behind docs/PERFORMANCE.md's tuning table: per shape of one bench run, the tuned
// choice against the baseline kernel and against the single best fixed variant (the one with the
// lowest geometric-mean time over every shape, among the variants timed at all of them).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/common/report_data.hpp"

namespace mqajit::tools {

struct ShapeComparison {
    std::int64_t seq_len = 0;
    std::int64_t seq_len_kv = 0;
    double flops = 0;
    std::string tuned_kernel{};        // empty: the table has no row for the shape
    std::optional<double> tuned_us{};  // nullopt: not tuned, or the tuned kernel was not timed in the run
    double baseline_us = 0;
    double best_fixed_us = 0;

    double tflops(double us) const { return flops / us * 1e-6; }
};

struct GeometricMeans {
    std::size_t num_shapes = 0;  // shapes with a tuned time: the means cover these only
    double tuned_tflops = 0;
    double baseline_tflops = 0;
    double best_fixed_tflops = 0;
    double speedup_over_baseline = 0;    // baseline_us / tuned_us
    double speedup_over_best_fixed = 0;  // best_fixed_us / tuned_us
};

struct TuningComparison {
    ShapeKey group;                  // of the tuned table; seq_len and seq_len_kv are 0
    std::string best_fixed{};          // the best fixed variant's name
    std::size_t num_fixed_candidates = 0;  // variants timed at every shape
    std::vector<ShapeComparison> shapes{};   // in bench-file order
    GeometricMeans means{};
    bool from_tuner = false;               // the times come from `mqajit tune --json-file`
    std::size_t best_fixed_probe_times = 0;  // shapes where the best fixed variant's time is a probe's
};

double geometric_mean(const std::vector<double>& values);

// Uses the bench rows of the table's group (heads, head_dim, clean_logits, and arch and cu_num when
// the bench file records them; a row without clean_logits ran with 1). Throws Error(invalid_argument) when none match, when a shape appears twice,
// or when no variant was timed at every shape.
TuningComparison compare_tuning(const TunedTable& table, const std::vector<BenchRow>& bench);

}  // namespace mqajit::tools
