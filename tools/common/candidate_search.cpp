#include "tools/common/candidate_search.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "core/check.hpp"

namespace mqajit::tools {
namespace {

std::string describe(const CandidateResult& c, double fastest_us, double prune_factor) {
    if (!c.verified) return fmt::format("{}: REJECTED, not timed: {}", c.kernel, c.problem);
    if (c.pruned)
        return fmt::format("{}: pruned: {:.1f} us in a {}-run probe, >{:g}x the best ({:.1f} us)", c.kernel,
                           c.median_us, c.runs, prune_factor, fastest_us);
    return fmt::format("{}: {:.1f} us (median of {} runs)", c.kernel, c.median_us, c.runs);
}

// NOTES: a decode row has no context and a prefill row serves shapes between rows, and calls may
// run in CUDA graphs, which the tuner does not time: a variant that wins by less than the timing
// noise is as likely to lose there. On the H200 a decode row picked at 0.3% faster than the
// baseline ran about 7% slower than it in graph replays at 4k contexts (two side-by-side calls,
// docs/PERFORMANCE.md 2026-12-04 evening). The baseline also needs no compile.
void keep_baseline_within_min_gain(SearchOutcome& outcome, double min_gain,
                                   const std::function<void(const std::string&)>& progress) {
    const auto baseline = std::find_if(outcome.ranked.begin(), outcome.ranked.end(),
                                       [&](std::size_t i) { return outcome.candidates[i].kernel == "baseline"; });
    if (min_gain <= 0 || baseline == outcome.ranked.end() || baseline == outcome.ranked.begin()) return;
    const CandidateResult& winner = outcome.candidates[outcome.ranked.front()];
    const double baseline_us = outcome.candidates[*baseline].median_us;
    if (winner.median_us < baseline_us * (1 - min_gain)) return;
    progress(fmt::format("baseline kept: {} took {:.1f} us against its {:.1f} us, {:.2f}% less, not more than "
                         "--min-gain {:g}%",
                         winner.kernel, winner.median_us, baseline_us, 100 * (1 - winner.median_us / baseline_us),
                         100 * min_gain));
    std::rotate(outcome.ranked.begin(), baseline, baseline + 1);
}

}  // namespace

bool is_pruned(double probe_us, double fastest_us, double prune_factor) {
    return prune_factor > 0 && fastest_us > 0 && probe_us > prune_factor * fastest_us;
}

std::string today() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    return fmt::format("{:%Y-%m-%d}", utc);
}

std::optional<std::string> SearchOutcome::runner_up() const {
    if (ranked.size() < 2) return std::nullopt;
    return candidates[ranked[1]].kernel;
}

std::optional<double> SearchOutcome::baseline_us() const {
    const auto baseline = std::find_if(candidates.begin(), candidates.end(),
                                       [](const CandidateResult& c) { return c.kernel == "baseline"; });
    if (baseline == candidates.end() || !baseline->verified) return std::nullopt;
    return baseline->median_us;
}

SearchOutcome search_candidates(const std::vector<std::string>& kernels, const CandidateSearch& search,
                                const TuneSettings& settings, const std::function<void(const std::string&)>& progress) {
    SearchOutcome outcome;
    auto interrupted = [&] { return settings.interrupted && settings.interrupted->load(); };
    auto in_flight = [&](const std::string& kernel, CandidatePhase phase, auto&& work) {
        CandidateScope scope(settings.watchdog, kernel, search.label, phase);
        return scope.run(work);
    };
    const TimingOptions full{.warmup_runs = settings.warmup_runs, .timed_runs = settings.timed_runs};
    const TimingOptions probe{.warmup_runs = kProbeWarmupRuns, .timed_runs = kProbeRuns};

    double fastest_us = 0;  // the fastest full or probe median so far
    auto note_time = [&](double us) { fastest_us = fastest_us > 0 ? std::min(fastest_us, us) : us; };
    for (const std::string& kernel : kernels) {
        if (interrupted()) return outcome;
        CandidateResult candidate = in_flight(kernel, CandidatePhase::check, [&] { return search.verify(kernel); });
        const double fastest_before = fastest_us;
        // NOTES: the baseline is always timed in full: its median is the row's baseline_us.
        if (candidate.verified && kernel != "baseline" && settings.prune_factor > 0) {
            const Timing t = in_flight(kernel, CandidatePhase::probe, [&] { return search.time(kernel, probe); });
            if (is_pruned(t.median_us, fastest_us, settings.prune_factor)) {
                candidate.pruned = true;
                candidate.median_us = t.median_us;
                candidate.runs = t.runs;
            } else {
                note_time(t.median_us);
            }
        }
        if (candidate.verified && !candidate.pruned) {
            const Timing t = in_flight(kernel, CandidatePhase::timing, [&] { return search.time(kernel, full); });
            candidate.median_us = t.median_us;
            candidate.runs = t.runs;
            note_time(t.median_us);
        }
        progress(describe(candidate, fastest_before, settings.prune_factor));
        outcome.candidates.push_back(std::move(candidate));
    }

    for (std::size_t i = 0; i < outcome.candidates.size(); ++i)
        if (outcome.candidates[i].verified && !outcome.candidates[i].pruned) outcome.ranked.push_back(i);
    MQAJIT_CHECK_KIND(internal, !outcome.ranked.empty(), "no candidate passed the reference check at {}", search.label);
    auto by_time = [&](std::size_t a, std::size_t b) {
        return outcome.candidates[a].median_us < outcome.candidates[b].median_us;
    };
    std::stable_sort(outcome.ranked.begin(), outcome.ranked.end(), by_time);
    const std::size_t finalists = std::min<std::size_t>(3, outcome.ranked.size());
    for (int round = 0; round < 3; ++round) {
        for (std::size_t i = 0; i < finalists; ++i) {
            if (interrupted()) return outcome;
            CandidateResult& finalist = outcome.candidates[outcome.ranked[i]];
            const Timing t = in_flight(finalist.kernel, CandidatePhase::timing,
                                       [&] { return search.time(finalist.kernel, full); });
            finalist.median_us = std::min(finalist.median_us, t.median_us);
        }
    }
    std::stable_sort(outcome.ranked.begin(), outcome.ranked.begin() + static_cast<std::ptrdiff_t>(finalists), by_time);
    keep_baseline_within_min_gain(outcome, settings.min_gain, progress);
    outcome.complete = true;
    return outcome;
}

RecheckResult recheck_candidate(const CandidateSearch& search, const std::string& kernel, double recorded_us,
                                const TuneSettings& settings) {
    RecheckResult result;
    const CandidateResult check = CandidateScope(settings.watchdog, kernel, search.label, CandidatePhase::check).run([&] {
        return search.verify(kernel);
    });
    result.verified = check.verified;
    result.problem = check.problem;
    if (!result.verified) return result;
    const TimingOptions full{.warmup_runs = settings.warmup_runs, .timed_runs = settings.timed_runs};
    result.measured_us = CandidateScope(settings.watchdog, kernel, search.label, CandidatePhase::timing).run([&] {
        return search.time(kernel, full).median_us;
    });
    result.drift = recorded_us > 0 ? result.measured_us / recorded_us - 1.0 : 0.0;
    return result;
}

}  // namespace mqajit::tools
