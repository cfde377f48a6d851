#include "tools/common/paged_tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>

#include "codegen/paged_variant_support.hpp"
#include "codegen/variant_registry.hpp"
#include "core/check.hpp"

namespace mqajit::tools {
namespace {

double geometric_mean(const std::vector<double>& values) {
    double log_sum = 0;
    for (double v : values) log_sum += std::log(std::max(v, 1e-9));
    return values.empty() ? 0.0 : std::exp(log_sum / static_cast<double>(values.size()));
}

// Times kernels on one full-size problem per context of the shape. A kernel's Timing is the
// geometric mean of its per-context medians (and minima); each kernel's per-context medians of
// its best timing are kept for the JSON rows.
class PagedShapeTimer {
public:
    PagedShapeTimer(Device& device, const PagedBenchShape& shape, const std::vector<int>& contexts)
        : clean_logits_(clean_logits_of(shape)), timer_(device) {
        for (int context : contexts) {
            problems_.push_back(std::make_unique<DevicePagedProblem>(
                device, make_paged_problem(paged_timing_spec(shape, context, paged_timing_seed(shape, context)))));
        }
    }

    Timing time(const std::string& kernel, const TimingOptions& options) {
        std::vector<double> medians, minima;
        Timing result;
        for (const auto& problem : problems_) {
            const Timing t = timer_.time(
                [&](void* stream) {
                    problem->run(PagedMqaLogitsOptions{.clean_logits = clean_logits_, .stream = stream, .variant = kernel});
                },
                options);
            medians.push_back(t.median_us);
            minima.push_back(t.min_us);
            result.runs = t.runs;
        }
        result.median_us = geometric_mean(medians);
        result.min_us = geometric_mean(minima);
        auto& best = best_[kernel];
        if (best.first == 0 || result.median_us < best.first) best = {result.median_us, medians};
        return result;
    }

    std::map<std::string, std::vector<double>> context_us() const {
        std::map<std::string, std::vector<double>> out;
        for (const auto& [kernel, best] : best_) out[kernel] = best.second;
        return out;
    }
    std::vector<std::int64_t> floor_bytes() const {
        std::vector<std::int64_t> bytes;
        for (const auto& problem : problems_) bytes.push_back(paged_floor_bytes(problem->host(), clean_logits_));
        return bytes;
    }

private:
    bool clean_logits_;
    DeviceTimer timer_;
    std::vector<std::unique_ptr<DevicePagedProblem>> problems_;
    std::map<std::string, std::pair<double, std::vector<double>>> best_;
};

PagedShapeKey key_for(Device& device, const PagedBenchShape& s) {
    return PagedShapeKey{.arch = Arch::parse(device.arch()).name, .cu_num = device.multiprocessor_count(),
                         .next_n = s.next_n, .heads = s.heads, .head_dim = s.head_dim, .block_kv = s.block_kv,
                         .clean_logits = clean_logits_of(s) ? 1 : 0, .batch = s.batch};
}

}  // namespace

bool clean_logits_of(const PagedBenchShape& shape) { return shape.clean_logits.value_or(0) != 0; }

std::uint64_t fresh_paged_seed() {
    static std::uint64_t counter =
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) * 2 + 1;
    return ++counter;
}

Support paged_kernel_support(const Arch& arch, const PagedBenchShape& shape, const std::string& kernel) {
    if (kernel == "baseline") return Support{.ok = true, .reason = {}};
    return paged_variant_support(arch, {.heads = shape.heads, .head_dim = shape.head_dim, .next_n = shape.next_n,
                                        .block_kv = shape.block_kv},
                                 Variant::parse(kernel));
}

std::vector<std::string> paged_tuning_candidates(std::string_view arch_name, const PagedBenchShape& shape,
                                                 const std::vector<std::string>& excluded) {
    const Arch arch = Arch::parse(arch_name);
    std::vector<std::string> names = {"baseline"};
    for (const Variant& v : VariantRegistry::for_op(KernelOp::paged_mqa_logits).variants(arch, shape.heads, shape.head_dim))
        if (paged_kernel_support(arch, shape, v.name())) names.push_back(v.name());
    std::erase_if(names, [&](const std::string& name) {
        return std::find(excluded.begin(), excluded.end(), name) != excluded.end();
    });
    return names;
}

PagedProblemSpec paged_check_spec(const PagedBenchShape& shape, std::uint64_t seed) {
    const int longest = shape.contexts.empty() ? 4096 : *std::max_element(shape.contexts.begin(), shape.contexts.end());
    // NOTES: the kernel's schedule depends on the batch (how the blocks of all requests split over
    // the CTAs), so the check keeps it and shortens the contexts instead: the reference kernel,
    // the download and the comparison stay cheap at B=2048, and runs still span requests.
    const int context = std::max(1, std::min(longest, kPagedCheckTokens / shape.batch));
    return PagedProblemSpec{.batch = shape.batch, .next_n = shape.next_n, .heads = shape.heads,
                            .head_dim = shape.head_dim, .block_kv = shape.block_kv, .average_context = context,
                            .context_lens_2d = true, .seed = seed};
}

std::uint64_t paged_timing_seed(const PagedBenchShape& shape, int context) {
    std::uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (const std::int64_t field : {std::int64_t{shape.batch}, std::int64_t{shape.next_n}, std::int64_t{shape.heads},
                                     std::int64_t{shape.head_dim}, std::int64_t{shape.block_kv}, std::int64_t{context}}) {
        seed ^= static_cast<std::uint64_t>(field) + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
    }
    return seed;
}

// NOTES: timed problems give every request blocks of its own, as engines' decode and the
// side-by-side script's permuted tables do. Until 2026-12-06 they shared half (the check's layout):
// a call then read half the cache twice, partly from L2 (docs/PERFORMANCE.md, 2026-12-06 night).
PagedProblemSpec paged_timing_spec(const PagedBenchShape& shape, int context, std::uint64_t seed) {
    return PagedProblemSpec{.batch = shape.batch, .next_n = shape.next_n, .heads = shape.heads,
                            .head_dim = shape.head_dim, .block_kv = shape.block_kv, .average_context = context,
                            .context_lens_2d = true, .shared_blocks = false, .seed = seed};
}

std::int64_t paged_floor_bytes(const HostPagedProblem& p, bool clean_logits) {
    const PagedProblemSpec& s = p.spec;
    const std::int64_t cache = p.keys_read() * (s.head_dim + 4);
    const std::int64_t inputs = p.rows() * s.heads * s.head_dim + p.rows() * s.heads * 4;
    const std::int64_t written = clean_logits ? p.rows() * p.max_context_len : p.visible_pairs();
    return cache + inputs + written * 4;
}

PagedKernelCheck::PagedKernelCheck(Device& device, const PagedBenchShape& shape, std::uint64_t seed)
    : problem_(device, make_paged_problem(paged_check_spec(shape, seed))),
      clean_logits_(clean_logits_of(shape)),
      expected_(reference_paged_logits(problem_, clean_logits_)) {}

CandidateResult PagedKernelCheck::verify(const std::string& kernel) {
    CandidateResult result{.kernel = kernel};
    try {
        const CheckResult outcome = check_paged_against(
            problem_, expected_, PagedMqaLogitsOptions{.clean_logits = clean_logits_, .variant = kernel});
        result.verified = outcome.passed(kMaxCalcDiff) && outcome.comparison.checked > 0 && outcome.kernel == kernel;
        if (!result.verified)
            result.problem = outcome.kernel == kernel ? outcome.summary()
                                                      : fmt::format("{} (served by {})", outcome.summary(), outcome.kernel);
    } catch (const Error& e) {
        if (is_context_fault(e)) throw;  // NOTES: not a rejection: nothing can run after it
        result.problem = e.what();
    }
    return result;
}

PagedShapeResult tune_paged_shape(Device& device, const PagedBenchShape& shape, const TuneSettings& settings,
                                  const std::function<void(const std::string&)>& progress) {
    PagedShapeResult result{.key = key_for(device, shape), .contexts = shape.contexts};
    MQAJIT_CHECK(!shape.contexts.empty(), "{}: no context to time it at", paged_shape_label(shape));
    PagedKernelCheck check(device, shape, fresh_paged_seed());
    PagedShapeTimer timer(device, shape, shape.contexts);
    result.floor_bytes = timer.floor_bytes();
    const CandidateSearch search{
        .label = paged_shape_label(shape) + " contexts=" + contexts_field(shape.contexts),
        .verify = [&](const std::string& kernel) { return check.verify(kernel); },
        .time = [&](const std::string& kernel, const TimingOptions& options) { return timer.time(kernel, options); }};
    SearchOutcome outcome =
        search_candidates(paged_tuning_candidates(device.arch(), shape, settings.excluded), search, settings, progress);
    if (outcome.complete) {
        result.row.key = result.key;
        record_choice(result.row, outcome, settings);
    }
    result.complete = outcome.complete;
    result.candidates = std::move(outcome.candidates);
    result.context_us = timer.context_us();
    return result;
}

RecheckResult recheck_paged_row(Device& device, const PagedTunedRow& row, const std::vector<int>& contexts,
                                const TuneSettings& settings) {
    const PagedBenchShape shape{.batch = static_cast<int>(row.key.batch), .next_n = row.key.next_n,
                                .heads = row.key.heads, .head_dim = row.key.head_dim, .block_kv = row.key.block_kv,
                                .contexts = contexts, .clean_logits = row.key.clean_logits};
    std::optional<PagedShapeTimer> timer;  // NOTES: made only once the kernel passed its check
    const CandidateSearch search{
        .label = paged_shape_label(shape) + " contexts=" + contexts_field(contexts),
        .verify = [&](const std::string& kernel) { return PagedKernelCheck(device, shape, fresh_paged_seed()).verify(kernel); },
        .time = [&](const std::string& kernel, const TimingOptions& options) {
            if (!timer) timer.emplace(device, shape, contexts);
            return timer->time(kernel, options);
        }};
    return recheck_candidate(search, recorded_kernel(row), row.us, settings);
}

}  // namespace mqajit::tools
