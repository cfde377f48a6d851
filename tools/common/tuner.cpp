#include "tools/common/tuner.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>

#include "core/check.hpp"
#include "tools/common/device_problem.hpp"
#include "variants/registry.hpp"

namespace mqajit::tools {
namespace {

// NOTES: candidates are verified on a problem of the shape's N (the KV split and tile logic depend
// on it) and at most 512 query rows, so the reference kernel and three full downloads stay cheap.
constexpr int kCheckRows = 512;

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

CandidateResult verify(Device& device, const BenchShape& shape, const std::string& kernel) {
    CandidateResult result{.kernel = kernel};
    try {
        DeviceProblem check(device, make_problem(std::min(shape.seq_len, kCheckRows), shape.seq_len_kv, shape.heads,
                                                 shape.head_dim, MaskKind::causal, fresh_seed()));
        const CheckResult outcome = check_against_reference(check, MqaLogitsOptions{.variant = kernel});
        result.verified = outcome.passed(kMaxCalcDiff) && outcome.kernel == kernel;
        if (!result.verified) result.problem = outcome.summary();
    } catch (const Error& e) {
        result.problem = e.what();
    }
    return result;
}

}  // namespace

std::vector<std::string> tuning_candidates(Device& device, const BenchShape& shape) {
    std::vector<std::string> names = {"baseline"};
    for (const Variant& v : VariantRegistry::instance().variants(Arch::parse(device.arch()), shape.heads, shape.head_dim)) {
        if (v.op != MatrixOp::mfma) names.push_back(v.name());
    }
    return names;
}

ShapeResult tune_shape(Device& device, const BenchShape& shape, const TuneSettings& settings,
                       const std::function<void(const std::string&)>& progress) {
    ShapeResult result;
    auto interrupted = [&] { return settings.interrupted && settings.interrupted->load(); };
    DeviceProblem problem(device, make_problem(shape.seq_len, shape.seq_len_kv, shape.heads, shape.head_dim,
                                               MaskKind::causal, fresh_seed()));
    DeviceTimer timer(device);
    const TimingOptions timing{.warmup_runs = settings.warmup_runs, .timed_runs = settings.timed_runs};
    auto time_kernel = [&](const std::string& kernel) {
        return timer.time([&](void* stream) { problem.run(MqaLogitsOptions{.stream = stream, .variant = kernel}); }, timing)
            .median_us;
    };

    for (const std::string& kernel : tuning_candidates(device, shape)) {
        if (interrupted()) return result;
        CandidateResult candidate = verify(device, shape, kernel);
        if (candidate.verified) candidate.median_us = time_kernel(kernel);
        progress(candidate.verified ? fmt::format("{}: {:.1f} us", kernel, candidate.median_us)
                                    : fmt::format("{}: REJECTED, not timed: {}", kernel, candidate.problem));
        result.candidates.push_back(std::move(candidate));
    }

    std::vector<CandidateResult*> ranked;
    for (auto& c : result.candidates)
        if (c.verified) ranked.push_back(&c);
    MQAJIT_CHECK_KIND(internal, !ranked.empty(), "no candidate passed the reference check for S={} N={} H={} D={}",
                      shape.seq_len, shape.seq_len_kv, shape.heads, shape.head_dim);
    auto by_time = [](const CandidateResult* a, const CandidateResult* b) { return a->median_us < b->median_us; };
    std::sort(ranked.begin(), ranked.end(), by_time);
    const std::size_t finalists = std::min<std::size_t>(3, ranked.size());
    for (int round = 0; round < 3; ++round) {
        for (std::size_t i = 0; i < finalists; ++i) {
            if (interrupted()) return result;
            ranked[i]->median_us = std::min(ranked[i]->median_us, time_kernel(ranked[i]->kernel));
        }
    }
    std::sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(finalists), by_time);

    const CandidateResult& winner = *ranked.front();
    const auto baseline = std::find_if(result.candidates.begin(), result.candidates.end(),
                                       [](const CandidateResult& c) { return c.kernel == "baseline"; });
    TunedRow& row = result.row;
    row.key = ShapeKey{.arch = Arch::parse(device.arch()).name, .cu_num = device.multiprocessor_count(),
                       .heads = shape.heads, .head_dim = shape.head_dim, .seq_len = shape.seq_len,
                       .seq_len_kv = shape.seq_len_kv};
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
                           .seq_len = static_cast<int>(row.key.seq_len), .seq_len_kv = static_cast<int>(row.key.seq_len_kv)};
    const std::string kernel = row.backend == "jit" ? row.variant : "baseline";
    RecheckResult result;
    const CandidateResult check = verify(device, shape, kernel);
    result.verified = check.verified;
    result.problem = check.problem;
    if (!result.verified) return result;
    DeviceProblem problem(device, make_problem(shape.seq_len, shape.seq_len_kv, shape.heads, shape.head_dim,
                                               MaskKind::causal, fresh_seed()));
    DeviceTimer timer(device);
    result.measured_us =
        timer.time([&](void* stream) { problem.run(MqaLogitsOptions{.stream = stream, .variant = kernel}); },
                   TimingOptions{.warmup_runs = settings.warmup_runs, .timed_runs = settings.timed_runs})
            .median_us;
    result.drift = row.us > 0 ? result.measured_us / row.us - 1.0 : 0.0;
    return result;
}

}  // namespace mqajit::tools
