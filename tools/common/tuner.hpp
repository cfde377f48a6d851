#pragma once
// The tuner's steps for one shape on the live GPU: verify every candidate against the reference
// kernel on fresh data (a failing candidate is reported and never timed), probe the survivors
// with a few runs and prune those far slower than the best so far, time the rest (L2 flushed,
// median), re-time the three fastest three times interleaved, pick the best median.

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "runtime/backend.hpp"
#include "runtime/device.hpp"
#include "tools/common/shapes.hpp"
#include "tools/common/timing.hpp"
#include "tools/common/tune_watchdog.hpp"
#include "tuning_db/tuned_row.hpp"

namespace mqajit::tools {

inline constexpr const char* kTunerVersion = "mqajit-tune 0.1.0";

// A candidate's short probe before its full timing (L2 flushed as always).
inline constexpr int kProbeWarmupRuns = 2;
inline constexpr int kProbeRuns = 5;
inline constexpr double kDefaultPruneFactor = 1.5;

struct TuneSettings {
    int timed_runs = 50;
    int warmup_runs = 5;
    double prune_factor = kDefaultPruneFactor;  // 0: no probe, every verified candidate fully timed
    std::string compiler_version;  // "nvrtc 13.0"
    std::string driver_version;    // "13.0"
    const std::atomic<bool>* interrupted = nullptr;  // checked between candidates
    TuneWatchdog* watchdog = nullptr;  // told of every candidate's check, probe and timing
    std::vector<std::string> excluded;  // candidates left out (--exclude)
};

struct CandidateResult {
    std::string kernel;      // "baseline" or a variant name
    bool verified = false;
    std::string problem{};   // why it was rejected (check summary or error)
    bool pruned = false;     // verified, but its probe was too slow to time it fully
    double median_us = 0;    // best median over all timings (the probe's for a pruned candidate)
    int runs = 0;            // timed runs behind each median (kProbeRuns for a pruned candidate)
};

struct ShapeResult {
    bool complete = false;   // false when interrupted before the shape finished
    TunedRow row;
    double flops = 0;        // useful FLOPs of the shape (unmasked pairs x 2 x H x D, causal)
    std::vector<CandidateResult> candidates{};
};

// Whether a candidate whose probe median is `probe_us` is pruned: more than `prune_factor` times
// `fastest_us`, the fastest median (full or probe) seen so far at the shape. Nothing is pruned
// while there is no fastest yet (`fastest_us` <= 0) or when `prune_factor` <= 0 (pruning off).
bool is_pruned(double probe_us, double fastest_us, double prune_factor);

// Candidates for a shape on `arch`: the baseline plus every registered variant that can run
// there (every vendor's families), less those named in `excluded`.
std::vector<std::string> tuning_candidates(std::string_view arch, const BenchShape& shape,
                                           const std::vector<std::string>& excluded = {});

// Checks the names given to --exclude: each must be "baseline" or a variant name. Throws
// Error(invalid_argument) naming the first that is neither.
void check_excluded_names(const std::vector<std::string>& names);

// "nvrtc 13.0": the compiler a tuned row records, the backend's run-time compiler (clang's, for
// `mqajit aot` code objects, where an AMD machine has no hiprtc).
std::string kernel_compiler_version(const Backend& backend);


// "H=32 D=128 S=2048 N=8192 clean_logits=0": how the tuner names a shape in its lines.
std::string shape_label(const BenchShape& shape);

// The mode a shape is tuned and timed in: its own, else clean_logits=0 (the callers').
bool clean_logits_of(const BenchShape& shape);

// Tunes `shape` in its mode (clean_logits_of): every candidate is checked and timed in it, and
// the row's key carries it.
ShapeResult tune_shape(Device& device, const BenchShape& shape, const TuneSettings& settings,
                       const std::function<void(const std::string&)>& progress);

// Re-checks a tuned row's kernel on fresh data and re-times it, in the row's clean_logits mode.
struct RecheckResult {
    bool verified = false;
    std::string problem;
    double measured_us = 0;
    double drift = 0;  // measured / recorded - 1
};
RecheckResult recheck_row(Device& device, const TunedRow& row, const TuneSettings& settings);

}  // namespace mqajit::tools
