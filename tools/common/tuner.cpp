#include "tools/common/tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

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

// One shape's check problem: fresh random inputs (a new seed per shape), the reference kernel run
// once and its logits downloaded once; every candidate of the shape is checked against them.
class ShapeCheck {
public:
    ShapeCheck(Device& device, const BenchShape& shape)
        : problem_(device, make_problem(std::min(shape.seq_len, kCheckRows), shape.seq_len_kv, shape.heads,
                                        shape.head_dim, MaskKind::causal, fresh_seed()),
                   logits_dtype_of(shape)),
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
                                        MaskKind::causal, fresh_seed()),
                   logits_dtype_of(shape)),
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

}  // namespace

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

DType logits_dtype_of(const BenchShape& shape) {
    return shape.logits_dtype == "bfloat16" ? DType::bfloat16 : DType::float32;
}

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
    if (s.logits_dtype != "float32") label += fmt::format(" logits_dtype={}", s.logits_dtype);
    return label;
}

ShapeResult tune_shape(Device& device, const BenchShape& shape, const TuneSettings& settings,
                       const std::function<void(const std::string&)>& progress) {
    ShapeResult result;
    ShapeCheck check(device, shape);
    ShapeTimer timer(device, shape);
    result.flops = timer.flops();
    const CandidateSearch search{
        .label = shape_label(shape),
        .verify = [&](const std::string& kernel) { return check.verify(kernel); },
        .time = [&](const std::string& kernel, const TimingOptions& options) { return timer.time(kernel, options); }};
    SearchOutcome outcome =
        search_candidates(tuning_candidates(device.arch(), shape, settings.excluded), search, settings, progress);
    if (outcome.complete) {
        result.row.key = ShapeKey{.arch = Arch::parse(device.arch()).name, .cu_num = device.multiprocessor_count(),
                                  .heads = shape.heads, .head_dim = shape.head_dim,
                                  .clean_logits = clean_logits_of(shape) ? 1 : 0, .logits_dtype = shape.logits_dtype,
                                  .seq_len = shape.seq_len,
                                  .seq_len_kv = shape.seq_len_kv};
        record_choice(result.row, outcome, settings);
    }
    result.complete = outcome.complete;
    result.candidates = std::move(outcome.candidates);
    return result;
}

RecheckResult recheck_row(Device& device, const TunedRow& row, const TuneSettings& settings) {
    const BenchShape shape{.heads = row.key.heads, .head_dim = row.key.head_dim,
                           .seq_len = static_cast<int>(row.key.seq_len), .seq_len_kv = static_cast<int>(row.key.seq_len_kv),
                           .clean_logits = row.key.clean_logits, .logits_dtype = row.key.logits_dtype};
    std::optional<ShapeTimer> timer;  // NOTES: made only once the kernel passed its check
    const CandidateSearch search{
        .label = shape_label(shape),
        .verify = [&](const std::string& kernel) { return ShapeCheck(device, shape).verify(kernel); },
        .time = [&](const std::string& kernel, const TimingOptions& options) {
            if (!timer) timer.emplace(device, shape);
            return timer->time(kernel, options);
        }};
    return recheck_candidate(search, recorded_kernel(row), row.us, settings);
}

}  // namespace mqajit::tools
