#include "tools/common/tuner.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>

#include "core/check.hpp"
#include "tools/common/device_problem.hpp"
#include "codegen/variant_registry.hpp"

namespace mqajit::tools {
namespace {

// NOTES: candidates are verified on a problem of the shape's N (the KV split and tile logic depend
// on it) and at most 256 query rows: still dozens of q-blocks, and few enough that the launch
// splits the KV range several ways, while the reference and the downloads stay cheap at N = 64K.
constexpr int kCheckRows = 256;

std::uint64_t fresh_seed() {
    static std::uint64_t counter = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    return ++counter;
}

std::string today() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    return fmt::format("{:%Y-%m-%d}", utc);
}

// One shape's check problem: fresh random inputs (a new seed per shape), the reference kernel run
// once and its logits downloaded once; every candidate of the shape is checked against them.
class ShapeCheck {
public:
    ShapeCheck(Device& device, const BenchShape& shape)
        : problem_(device, make_problem(std::min(shape.seq_len, kCheckRows), shape.seq_len_kv, shape.heads,
                                        shape.head_dim, MaskKind::causal, fresh_seed())),
          clean_logits_(clean_logits_of(shape)),
          expected_(reference_logits(problem_, clean_logits_)) {}

    CandidateResult verify(const std::string& kernel) {
        CandidateResult result{.kernel = kernel};
        try {
            const CheckResult outcome =
                check_against(problem_, expected_, MqaLogitsOptions{.clean_logits = clean_logits_, .variant = kernel});
            result.verified = outcome.passed(kMaxCalcDiff) && outcome.kernel == kernel;
            if (!result.verified) result.problem = outcome.summary();
        } catch (const Error& e) {
            if (is_context_fault(e)) throw;  // NOTES: not a rejection: nothing can run after it
            result.problem = e.what();
        }
        return result;
    }

private:
    DeviceProblem problem_;
    bool clean_logits_;
    std::vector<float> expected_;
};

// Times kernels on one full-size problem of the shape.
class ShapeTimer {
public:
    ShapeTimer(Device& device, const BenchShape& shape)
        : problem_(device, make_problem(shape.seq_len, shape.seq_len_kv, shape.heads, shape.head_dim,
                                        MaskKind::causal, fresh_seed())),
          clean_logits_(clean_logits_of(shape)),
          timer_(device) {}

    Timing time(const std::string& kernel, const TimingOptions& options) {
        return timer_.time(
            [&](void* stream) {
                problem_.run(MqaLogitsOptions{.clean_logits = clean_logits_, .stream = stream, .variant = kernel});
            },
            options);
    }
    double flops() const { return problem_.host().flops(); }

private:
    DeviceProblem problem_;
    bool clean_logits_;
    DeviceTimer timer_;
};

std::string describe(const CandidateResult& c, double fastest_us, double prune_factor) {
    if (!c.verified) return fmt::format("{}: REJECTED, not timed: {}", c.kernel, c.problem);
    if (c.pruned)
        return fmt::format("{}: pruned: {:.1f} us in a {}-run probe, >{:g}x the best ({:.1f} us)", c.kernel,
                           c.median_us, c.runs, prune_factor, fastest_us);
    return fmt::format("{}: {:.1f} us (median of {} runs)", c.kernel, c.median_us, c.runs);
}

}  // namespace

bool is_pruned(double probe_us, double fastest_us, double prune_factor) {
    return prune_factor > 0 && fastest_us > 0 && probe_us > prune_factor * fastest_us;
}

std::vector<std::string> tuning_candidates(std::string_view arch, const BenchShape& shape,
                                           const std::vector<std::string>& excluded) {
    std::vector<std::string> names = {"baseline"};
    for (const Variant& v : VariantRegistry::instance().variants(Arch::parse(arch), shape.heads, shape.head_dim)) {
        names.push_back(v.name());
    }
    std::erase_if(names, [&](const std::string& name) {
        return std::find(excluded.begin(), excluded.end(), name) != excluded.end();
    });
    return names;
}

void check_excluded_names(const std::vector<std::string>& names) {
    for (const std::string& name : names) {
        if (name == "baseline") continue;
        try {
            (void)Variant::parse(name);
        } catch (const Error& e) {
            MQAJIT_FAIL(invalid_argument, "--exclude {}: not baseline nor a variant name ({}); `mqajit variants` lists them",
                        name, e.what());
        }
    }
}

bool clean_logits_of(const BenchShape& shape) { return shape.clean_logits.value_or(0) != 0; }

std::string kernel_compiler_version(const Backend& backend) {
    const Compiler* compiler = nullptr;
    try {
        compiler = &backend.runtime_compiler();
    } catch (const Error& e) {
        // NOTES: an AMD machine without hiprtc runs `mqajit aot` code objects: clang built those.
        if (e.kind() != ErrorKind::not_found) throw;
        compiler = &backend.compiler();
    }
    return fmt::format("{} {}", compiler->name(), compiler->version());
}

std::string shape_label(const BenchShape& s) {
    std::string label = fmt::format("H={} D={} S={} N={}", s.heads, s.head_dim, s.seq_len, s.seq_len_kv);
    if (s.clean_logits) label += fmt::format(" clean_logits={}", *s.clean_logits);
    return label;
}

ShapeResult tune_shape(Device& device, const BenchShape& shape, const TuneSettings& settings,
                       const std::function<void(const std::string&)>& progress) {
    ShapeResult result;
    auto interrupted = [&] { return settings.interrupted && settings.interrupted->load(); };
    ShapeCheck check(device, shape);
    ShapeTimer timer(device, shape);
    result.flops = timer.flops();
    const std::string label = shape_label(shape);
    auto in_flight = [&](const std::string& kernel, CandidatePhase phase, auto&& work) {
        CandidateScope scope(settings.watchdog, kernel, label, phase);
        return scope.run(work);
    };
    const TimingOptions full{.warmup_runs = settings.warmup_runs, .timed_runs = settings.timed_runs};
    const TimingOptions probe{.warmup_runs = kProbeWarmupRuns, .timed_runs = kProbeRuns};

    double fastest_us = 0;  // the fastest full or probe median so far
    auto note_time = [&](double us) { fastest_us = fastest_us > 0 ? std::min(fastest_us, us) : us; };
    for (const std::string& kernel : tuning_candidates(device.arch(), shape, settings.excluded)) {
        if (interrupted()) return result;
        CandidateResult candidate = in_flight(kernel, CandidatePhase::check, [&] { return check.verify(kernel); });
        const double fastest_before = fastest_us;
        // NOTES: the baseline is always timed in full: its median is the row's baseline_us.
        if (candidate.verified && kernel != "baseline" && settings.prune_factor > 0) {
            const Timing t = in_flight(kernel, CandidatePhase::probe, [&] { return timer.time(kernel, probe); });
            if (is_pruned(t.median_us, fastest_us, settings.prune_factor)) {
                candidate.pruned = true;
                candidate.median_us = t.median_us;
                candidate.runs = t.runs;
            } else {
                note_time(t.median_us);
            }
        }
        if (candidate.verified && !candidate.pruned) {
            const Timing t = in_flight(kernel, CandidatePhase::timing, [&] { return timer.time(kernel, full); });
            candidate.median_us = t.median_us;
            candidate.runs = t.runs;
            note_time(t.median_us);
        }
        progress(describe(candidate, fastest_before, settings.prune_factor));
        result.candidates.push_back(std::move(candidate));
    }

    std::vector<CandidateResult*> ranked;
    for (auto& c : result.candidates)
        if (c.verified && !c.pruned) ranked.push_back(&c);
    MQAJIT_CHECK_KIND(internal, !ranked.empty(), "no candidate passed the reference check for S={} N={} H={} D={}",
                      shape.seq_len, shape.seq_len_kv, shape.heads, shape.head_dim);
    auto by_time = [](const CandidateResult* a, const CandidateResult* b) { return a->median_us < b->median_us; };
    std::sort(ranked.begin(), ranked.end(), by_time);
    const std::size_t finalists = std::min<std::size_t>(3, ranked.size());
    for (int round = 0; round < 3; ++round) {
        for (std::size_t i = 0; i < finalists; ++i) {
            if (interrupted()) return result;
            const std::string& kernel = ranked[i]->kernel;
            const Timing t = in_flight(kernel, CandidatePhase::timing, [&] { return timer.time(kernel, full); });
            ranked[i]->median_us = std::min(ranked[i]->median_us, t.median_us);
        }
    }
    std::sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(finalists), by_time);

    const CandidateResult& winner = *ranked.front();
    const auto baseline = std::find_if(result.candidates.begin(), result.candidates.end(),
                                       [](const CandidateResult& c) { return c.kernel == "baseline"; });
    TunedRow& row = result.row;
    row.key = ShapeKey{.arch = Arch::parse(device.arch()).name, .cu_num = device.multiprocessor_count(),
                       .heads = shape.heads, .head_dim = shape.head_dim, .clean_logits = clean_logits_of(shape) ? 1 : 0,
                       .seq_len = shape.seq_len, .seq_len_kv = shape.seq_len_kv};
    row.backend = winner.kernel == "baseline" ? "baseline" : "jit";
    row.variant = winner.kernel;
    row.us = winner.median_us;
    if (baseline != result.candidates.end() && baseline->verified) row.baseline_us = baseline->median_us;
    if (ranked.size() > 1) row.runner_up = ranked[1]->kernel;
    row.tuner_version = kTunerVersion;
    row.compiler_version = settings.compiler_version;
    row.driver_version = settings.driver_version;
    row.date = today();
    result.complete = true;
    return result;
}

RecheckResult recheck_row(Device& device, const TunedRow& row, const TuneSettings& settings) {
    const BenchShape shape{.heads = row.key.heads, .head_dim = row.key.head_dim,
                           .seq_len = static_cast<int>(row.key.seq_len), .seq_len_kv = static_cast<int>(row.key.seq_len_kv),
                           .clean_logits = row.key.clean_logits};
    const std::string kernel = row.backend == "jit" ? row.variant : "baseline";
    const std::string label = shape_label(shape);
    RecheckResult result;
    const CandidateResult check = CandidateScope(settings.watchdog, kernel, label, CandidatePhase::check).run([&] {
        return ShapeCheck(device, shape).verify(kernel);
    });
    result.verified = check.verified;
    result.problem = check.problem;
    if (!result.verified) return result;
    ShapeTimer timer(device, shape);
    const TimingOptions full{.warmup_runs = settings.warmup_runs, .timed_runs = settings.timed_runs};
    result.measured_us = CandidateScope(settings.watchdog, kernel, label, CandidatePhase::timing).run([&] {
        return timer.time(kernel, full).median_us;
    });
    result.drift = row.us > 0 ? result.measured_us / row.us - 1.0 : 0.0;
    return result;
}

}  // namespace mqajit::tools
