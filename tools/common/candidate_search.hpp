#pragma once
// The tuner's search over one shape's candidates, for any operator: verify every candidate
// against the reference (a failing one is reported and never timed), probe the survivors with a
// few runs and prune those far slower than the best so far, time the rest in full, re-time the
// three fastest three times, rank by the best median. The operator supplies how a candidate is
// verified and timed (tuner.cpp for mqa_logits, paged_tuner.cpp for paged_mqa_logits) and turns
// the outcome into its table's row (record_choice).

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tools/common/timing.hpp"
#include "tools/common/tune_watchdog.hpp"
#include "tuning_db/tuned_row.hpp"

namespace mqajit::tools {

// NOTES: 0.1.1 (2026-12-06): decode candidates are timed over distinct cache blocks per request
// (0.1.0 timed them over shared blocks, partly read from L2). A tune resuming from an output whose
// rows another version wrote tunes those shapes again (tuned_alike).
inline constexpr const char* kTunerVersion = "mqajit-tune 0.1.1";

// A candidate's short probe before its full timing (L2 flushed as always).
inline constexpr int kProbeWarmupRuns = 2;
inline constexpr int kProbeRuns = 5;
inline constexpr double kDefaultPruneFactor = 1.5;
// A variant must take less than the baseline's time by more than this fraction to replace it.
inline constexpr double kDefaultMinGain = 0.01;

struct TuneSettings {
    int timed_runs = 50;
    int warmup_runs = 5;
    double prune_factor = kDefaultPruneFactor;  // 0: no probe, every verified candidate fully timed
    double min_gain = kDefaultMinGain;          // 0: the fastest candidate wins, however close the baseline
    std::string compiler_version{};  // "nvrtc 13.0"
    std::string driver_version{};    // "13.0"
    const std::atomic<bool>* interrupted = nullptr;  // checked between candidates
    TuneWatchdog* watchdog = nullptr;  // told of every candidate's check, probe and timing
    std::vector<std::string> excluded{};  // candidates left out (--exclude)
};

// Whether a row of a tune's output answers `key` as this tuner would now (same tuner, compiler and
// driver versions): a tune that resumes skips such shapes and tunes the others again.
template <class Row, class Key>
bool tuned_alike(const Row& row, const Key& key, const TuneSettings& settings) {
    return row.key == key && row.tuner_version == kTunerVersion && row.compiler_version == settings.compiler_version &&
           row.driver_version == settings.driver_version;
}

struct CandidateResult {
    std::string kernel{};      // "baseline" or a variant name
    bool verified = false;
    std::string problem{};  // why it was rejected (check summary or error)
    bool pruned = false;     // verified, but its probe was too slow to time it fully
    double median_us = 0;    // best median over all timings (the probe's for a pruned candidate)
    int runs = 0;            // timed runs behind each median (kProbeRuns for a pruned candidate)
};

// Whether a candidate whose probe median is `probe_us` is pruned: more than `prune_factor` times
// `fastest_us`, the fastest median (full or probe) seen so far at the shape. Nothing is pruned
// while there is no fastest yet (`fastest_us` <= 0) or when `prune_factor` <= 0 (pruning off).
bool is_pruned(double probe_us, double fastest_us, double prune_factor);

// How one shape's candidates are verified and timed. Both run inside the watchdog's scope of
// the candidate (a context fault comes out as a CandidateFault).
struct CandidateSearch {
    std::string label;  // the shape, as the tuner's lines and the watchdog name it
    std::function<CandidateResult(const std::string& kernel)> verify;  // kernel, verified, problem
    // The candidate's time at the shape under `options` (its median_us is what ranks it).
    std::function<Timing(const std::string& kernel, const TimingOptions& options)> time;
};

struct SearchOutcome {
    bool complete = false;  // false when interrupted before the search finished
    std::vector<CandidateResult> candidates;  // in the order tried
    std::vector<std::size_t> ranked;  // indices of the fully timed candidates, fastest first

    const CandidateResult& winner() const { return candidates[ranked.front()]; }
    std::optional<std::string> runner_up() const;
    std::optional<double> baseline_us() const;  // the baseline's time, when it was verified
};

// Searches `kernels` in order, one progress line per candidate (and one when the baseline is kept
// over a variant within `min_gain` of it: the baseline then ranks first, that variant second).
// Throws Error(internal) when no candidate passes its check (nothing can be recorded for the shape).
SearchOutcome search_candidates(const std::vector<std::string>& kernels, const CandidateSearch& search,
                                const TuneSettings& settings, const std::function<void(const std::string&)>& progress);

// `tune --run-config`: a tuned row's kernel verified on fresh data, then timed once in full.
struct RecheckResult {
    bool verified = false;
    std::string problem;
    double measured_us = 0;
    double drift = 0;  // measured / recorded - 1
};
RecheckResult recheck_candidate(const CandidateSearch& search, const std::string& kernel, double recorded_us,
                                const TuneSettings& settings);

// The kernel a tuned row names: its variant, or "baseline".
template <class Key>
std::string recorded_kernel(const TunedRowOf<Key>& row) {
    return row.backend == kBackendJit ? row.variant : std::string("baseline");
}

// Today's date in UTC, "2026-12-01": a tuned row's date.
std::string today();

// The value columns of a tuned row from a finished search: the winner (backend "baseline" when
// the baseline won), its time, the baseline's, the runner-up and the provenance.
template <class Key>
void record_choice(TunedRowOf<Key>& row, const SearchOutcome& outcome, const TuneSettings& settings) {
    const CandidateResult& winner = outcome.winner();
    row.backend = winner.kernel == "baseline" ? std::string(kBackendBaseline) : std::string(kBackendJit);
    row.variant = winner.kernel;
    row.us = winner.median_us;
    row.baseline_us = outcome.baseline_us();
    row.runner_up = outcome.runner_up().value_or("");
    row.tuner_version = kTunerVersion;
    row.compiler_version = settings.compiler_version;
    row.driver_version = settings.driver_version;
    row.date = today();
}

}  // namespace mqajit::tools
