#pragma once
// The tuner's steps for one shape on the live GPU: verify every candidate against the reference
// kernel on fresh data (a failing candidate is reported and never timed), time the survivors
// (L2 flushed, median), re-time the three fastest three times interleaved, pick the best median.

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "runtime/device.hpp"
#include "tools/common/shapes.hpp"
#include "tools/common/timing.hpp"
#include "tuning_db/tuned_row.hpp"

namespace mqajit::tools {

inline constexpr const char* kTunerVersion = "mqajit-tune 0.1.0";

struct TuneSettings {
    int timed_runs = 50;
    int warmup_runs = 5;
    std::string compiler_version;  // "nvrtc 13.0"
    std::string driver_version;    // "13.0"
    const std::atomic<bool>* interrupted = nullptr;  // checked between candidates
};

struct CandidateResult {
    std::string kernel;      // "baseline" or a variant name
    bool verified = false;
    std::string problem;     // why it was rejected (check summary or error)
    double median_us = 0;    // best median over all timings
};

struct ShapeResult {
    bool complete = false;   // false when interrupted before the shape finished
    TunedRow row;
    std::vector<CandidateResult> candidates;
};

// Candidates for a shape on `device`: the baseline plus every registered variant that can run.
std::vector<std::string> tuning_candidates(Device& device, const BenchShape& shape);

ShapeResult tune_shape(Device& device, const BenchShape& shape, const TuneSettings& settings,
                       const std::function<void(const std::string&)>& progress);

// Re-checks a tuned row's kernel on fresh data and re-times it.
struct RecheckResult {
    bool verified = false;
    std::string problem;
    double measured_us = 0;
    double drift = 0;  // measured / recorded - 1
};
RecheckResult recheck_row(Device& device, const TunedRow& row, const TuneSettings& settings);

}  // namespace mqajit::tools
