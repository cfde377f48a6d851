#include "tools/common/topk_tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "codegen/family_registry.hpp"
#include "codegen/variant_registry.hpp"
#include "core/check.hpp"
#include "runtime/kernel_choice.hpp"
#include "tools/common/timing.hpp"
#include "tools/common/topk_problem.hpp"
#include "tools/common/tune_watchdog.hpp"
#include "tuning_db/tuning_db.hpp"

namespace mqajit::tools {
namespace {

bool is_fused(const std::string& kernel) {
    if (kernel == "baseline") return false;
    return kernel_family_for(Variant::parse(kernel)).kernel_op() == KernelOp::mqa_topk;
}

MqaTopkOptions options_for(const std::string& kernel, void* stream = nullptr) {
    return MqaTopkOptions{.stream = stream, .variant = kernel,
                          .path = is_fused(kernel) ? MqaTopkPath::fused : MqaTopkPath::unfused};
}

// A fresh check problem of the shape (its N, at most kTopkCheckRows rows), and the expected keys
// of each kernel the candidates select by, computed once each.
class TopkKernelCheck {
public:
    TopkKernelCheck(Device& device, const TopkBenchShape& shape)
        : problem_(device,
                   make_problem(std::min(shape.seq_len, kTopkCheckRows), shape.seq_len_kv, shape.heads,
                                shape.head_dim, MaskKind::causal, fresh_topk_seed()),
                   shape.k) {}

    CandidateResult verify(const std::string& kernel) {
        CandidateResult result{.kernel = kernel};
        try {
            const std::string selecting = selecting_kernel(kernel);
            auto found = expected_.find(selecting);
            if (found == expected_.end()) {
                const HostProblem& p = problem_.host();
                found = expected_
                            .emplace(selecting, expected_topk(p, problem_.logits_of(selecting), p.logits_row_stride,
                                                              problem_.k()))
                            .first;
            }
            const TopkCheck check = check_topk(problem_, found->second, options_for(kernel));
            const std::string served = is_fused(kernel) ? "fused " + kernel : kernel;
            result.verified = check.passed && check.kernel == served;
            if (!check.passed) result.problem = fmt::format("{}: {}", check.kernel, check.problem);
            else if (!result.verified) result.problem = fmt::format("served by {}, not {}", check.kernel, served);
        } catch (const Error& e) {
            if (is_context_fault(e)) throw;  // NOTES: not a rejection: nothing can run after it
            result.problem = e.what();
        }
        return result;
    }

private:
    DeviceTopkProblem problem_;
    std::map<std::string, std::vector<std::int32_t>> expected_;
};

// The full-size problem the candidates are timed on (the same inputs for every candidate).
class TopkTimer {
public:
    TopkTimer(Device& device, const TopkBenchShape& shape)
        : problem_(device,
                   make_problem(shape.seq_len, shape.seq_len_kv, shape.heads, shape.head_dim, MaskKind::causal,
                                fresh_topk_seed()),
                   shape.k),
          timer_(device) {}

    Timing time(const std::string& kernel, const TimingOptions& options) {
        return timer_.time([&](void* stream) { problem_.run(options_for(kernel, stream)); }, options);
    }

private:
    DeviceTopkProblem problem_;
    DeviceTimer timer_;
};

TopkBenchShape shape_of(const TopkTunedRow& row) {
    return TopkBenchShape{.heads = row.key.heads, .head_dim = row.key.head_dim,
                          .seq_len = static_cast<int>(row.key.seq_len), .seq_len_kv = static_cast<int>(row.key.seq_len_kv),
                          .k = row.key.k, .arch = row.key.arch, .cu_num = row.key.cu_num};
}

}  // namespace

std::vector<TopkBenchShape> topk_shapes(const std::vector<BenchShape>& shapes, int k) {
    std::vector<TopkBenchShape> out;
    for (const BenchShape& s : shapes) {
        out.push_back({.heads = s.heads, .head_dim = s.head_dim, .seq_len = s.seq_len, .seq_len_kv = s.seq_len_kv,
                       .k = k, .arch = s.arch, .cu_num = s.cu_num});
    }
    // NOTES: a prefill file may list a shape once per mode; mqa_topk has none, so once is enough.
    std::vector<TopkBenchShape> unique;
    for (const TopkBenchShape& s : out) {
        const bool seen = std::any_of(unique.begin(), unique.end(), [&](const TopkBenchShape& u) {
            return u.heads == s.heads && u.head_dim == s.head_dim && u.seq_len == s.seq_len &&
                   u.seq_len_kv == s.seq_len_kv && u.arch == s.arch && u.cu_num == s.cu_num;
        });
        if (!seen) unique.push_back(s);
    }
    return unique;
}

std::string topk_shape_label(const TopkBenchShape& s) {
    return fmt::format("H={} D={} S={} N={} k={}", s.heads, s.head_dim, s.seq_len, s.seq_len_kv, s.k);
}

TopkShapeKey topk_key_of(Device& device, const TopkBenchShape& s) {
    return TopkShapeKey{.arch = Arch::parse(device.arch()).name, .cu_num = device.multiprocessor_count(),
                        .heads = s.heads, .head_dim = s.head_dim, .k = s.k, .seq_len = s.seq_len,
                        .seq_len_kv = s.seq_len_kv};
}

std::string selecting_kernel(const std::string& kernel) {
    if (!is_fused(kernel)) return kernel;
    const Variant variant = Variant::parse(kernel);
    return topk_family_for(variant).logits_twin(variant).name();
}

std::vector<std::string> topk_tuning_candidates(std::string_view arch_name, int cu_num, const TopkBenchShape& shape,
                                                const std::vector<std::string>& excluded) {
    const Arch arch = Arch::parse(arch_name);
    std::vector<std::string> names = {"baseline"};
    const ProblemShape logits_shape{.heads = shape.heads, .head_dim = shape.head_dim, .seq_len = shape.seq_len,
                                    .seq_len_kv = shape.seq_len_kv};
    const KernelChoice logits =
        choose_logits_kernel(TuningDb::instance(), arch, cu_num, logits_shape, false, "", arch.name);
    if (logits.variant) names.push_back(logits.variant->name());
    for (const Variant& v : VariantRegistry::for_op(KernelOp::mqa_topk).variants(arch, shape.heads, shape.head_dim))
        names.push_back(v.name());
    std::erase_if(names, [&](const std::string& name) {
        return std::find(excluded.begin(), excluded.end(), name) != excluded.end();
    });
    return names;
}

TopkShapeResult tune_topk_shape(Device& device, const TopkBenchShape& shape, const TuneSettings& settings,
                                const std::function<void(const std::string&)>& progress) {
    TopkShapeResult result{.key = topk_key_of(device, shape)};
    TopkKernelCheck check(device, shape);
    std::optional<TopkTimer> timer;  // NOTES: made once a candidate passed: the full problem is large
    const CandidateSearch search{
        .label = topk_shape_label(shape),
        .verify = [&](const std::string& kernel) { return check.verify(kernel); },
        .time = [&](const std::string& kernel, const TimingOptions& options) {
            if (!timer) timer.emplace(device, shape);
            return timer->time(kernel, options);
        }};
    SearchOutcome outcome = search_candidates(
        topk_tuning_candidates(device.arch(), device.multiprocessor_count(), shape, settings.excluded), search,
        settings, progress);
    if (outcome.complete) {
        result.row.key = result.key;
        record_choice(result.row, outcome, settings);
    }
    result.complete = outcome.complete;
    result.candidates = std::move(outcome.candidates);
    return result;
}

RecheckResult recheck_topk_row(Device& device, const TopkTunedRow& row, const TuneSettings& settings) {
    const TopkBenchShape shape = shape_of(row);
    std::optional<TopkTimer> timer;
    const CandidateSearch search{
        .label = topk_shape_label(shape),
        .verify = [&](const std::string& kernel) { return TopkKernelCheck(device, shape).verify(kernel); },
        .time = [&](const std::string& kernel, const TimingOptions& options) {
            if (!timer) timer.emplace(device, shape);
            return timer->time(kernel, options);
        }};
    return recheck_candidate(search, recorded_kernel(row), row.us, settings);
}

}  // namespace mqajit::tools
