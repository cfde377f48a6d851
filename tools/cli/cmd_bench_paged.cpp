// mqajit bench --op paged_mqa_logits: times the decode op on the GLM-5 (or given) decode shapes at
// each of their average contexts, against the baseline kernel in the same measurement, on the
// live GPU; device events, L2 flushed before each run, median; each time against the bytes floor.
// With --check every kernel is first verified against the reference kernel on fresh data, and
// one that fails is reported and never timed. The modes --clean-logits names are timed in turn
// in one measurement, one line each.

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "codegen/paged_variant_support.hpp"
#include "core/check.hpp"
#include "core/settings.hpp"
#include "runtime/backend.hpp"
#include "runtime/paged_dispatch.hpp"
#include "tools/cli/bench_options.hpp"
#include "tools/cli/commands.hpp"
#include "tools/common/device_paged_problem.hpp"
#include "tools/common/paged_bench_output.hpp"
#include "tools/common/paged_tuner.hpp"
#include "tools/common/shapes.hpp"
#include "tools/common/tune_json.hpp"
#include "variants/arch.hpp"

namespace mqajit::cli {
namespace {

std::vector<tools::PagedBenchShape> load_paged_shapes(const BenchOptions& o) {
    std::optional<std::vector<int>> modes;
    if (o.clean_logits) modes = tools::parse_clean_logits_modes("--clean-logits", *o.clean_logits);
    std::vector<tools::PagedBenchShape> shapes;
    if (o.decode_flags_given()) {
        MQAJIT_CHECK(o.batch && o.context_len, "decode shapes from flags need --batch and --context-len (and "
                     "optionally --next-n, --heads, --head-dim, --block-kv)");
        shapes = tools::paged_shapes_from_lists(
            tools::parse_positive_list("--batch", *o.batch), tools::parse_positive_list("--next-n", o.next_n.value_or("1")),
            tools::parse_positive_list("--heads", o.heads.value_or("64")), o.head_dim.value_or(128),
            o.block_kv.value_or(64), tools::parse_positive_list("--context-len", *o.context_len));
    } else {
        const std::string which = o.shapes.value_or("glm5");
        shapes = tools::read_paged_shapes_csv(which == "glm5" || which == "deepseek" ? tools::shipped_paged_shapes_file(which)
                                                                                       : std::filesystem::path(which));
    }
    return tools::in_modes(shapes, modes);
}

// Refuses a requested kernel that cannot serve a shape, before any GPU is looked for where the
// arch is known (the shape's gfx column, else MQAJIT_ARCH), and on the live GPU's arch otherwise.
void check_requested_fit(const BenchOptions& o, const std::vector<tools::PagedBenchShape>& shapes,
                         const std::optional<Arch>& device_arch) {
    if (o.variant.empty() || o.variant == "all") return;
    std::vector<std::string> names = listed_variants(o.variant);
    if (names.empty()) names.push_back(o.variant);
    for (const tools::PagedBenchShape& s : shapes) {
        std::optional<Arch> arch = device_arch;
        if (!arch && !s.arch.empty()) arch = Arch::parse(s.arch);
        if (!arch && settings().arch_override) arch = Arch::parse(*settings().arch_override);
        for (const std::string& name : names) {
            if (!arch) {
                (void)Variant::parse(name);  // NOTES: a name that does not parse is bad usage even so
                continue;
            }
            const Support support = tools::paged_kernel_support(*arch, s, name);
            MQAJIT_CHECK(support.ok, "--variant {} cannot serve {} on {}: {}; pick shapes it fits (--next-n, --heads) "
                         "or --variant all", name, tools::paged_shape_label(s), arch->name, support.reason);
        }
    }
}

// What one mode of a shape times: `timed` (the requested or tuned kernel, or the candidates),
// then the baseline, whose timing comes last.
struct TimedKernel {
    std::string name;  // as the call requests it ("": the tuned choice)
    bool baseline_slot = false;  // the baseline's timing in the line
};
struct PagedModePlan {
    tools::PagedBenchResult result;
    std::vector<TimedKernel> timed;
    bool compare_candidates = false;
};

PagedModePlan plan_paged_mode(const BenchOptions& o, Device& device, const tools::PagedBenchShape& s) {
    PagedModePlan plan;
    plan.result = tools::PagedBenchResult{.shape = s, .arch = Arch::parse(device.arch()).name,
                                          .cu_num = device.multiprocessor_count(), .checked = o.check};
    std::vector<std::string> candidates = listed_variants(o.variant);
    if (o.variant == "all") {
        candidates = tools::paged_tuning_candidates(device.arch(), s, {"baseline"});
        MQAJIT_CHECK_KIND(unsupported, !candidates.empty(), "no paged_mqa_logits variant can run on {} at {}",
                          plan.result.arch, tools::paged_shape_label(s));
    }
    for (const std::string& name : candidates) plan.timed.push_back({.name = name});
    plan.compare_candidates = !plan.timed.empty();
    if (plan.compare_candidates) {
        plan.result.reason = "fastest of the candidates";
    } else {
        const PagedProblemShape shape{.batch = s.batch, .next_n = s.next_n, .heads = s.heads, .head_dim = s.head_dim,
                                      .block_kv = s.block_kv, .context_lens_2d = true};
        const KernelChoice choice = PagedDispatcher::instance().choose(shape, tools::clean_logits_of(s), o.variant);
        plan.result.kernel = choice.variant ? choice.variant->name() : "baseline";
        plan.result.reason = choice.reason;
        plan.timed.push_back({.name = o.variant});
    }
    plan.timed.push_back({.name = "baseline", .baseline_slot = true});
    return plan;
}

// --check: each planned kernel of a mode verified on one fresh problem; those that fail leave the
// plan (never timed) and say why in the line.
void check_paged_plan(PagedModePlan& plan, Device& device, int& failures) {
    tools::PagedKernelCheck check(device, plan.result.shape, tools::fresh_paged_seed());
    std::map<std::string, tools::CandidateResult> outcomes;
    std::vector<TimedKernel> passed;
    for (const TimedKernel& timed : plan.timed) {
        const std::string kernel = timed.name.empty() ? plan.result.kernel : timed.name;
        const bool first = !outcomes.contains(kernel);
        if (first) outcomes[kernel] = check.verify(kernel);
        const tools::CandidateResult& outcome = outcomes[kernel];
        if (outcome.verified) {
            passed.push_back(timed);
        } else if (first) {
            ++failures;
            plan.result.verdict += fmt::format(" CHECK FAILED {}: {}", kernel, outcome.problem);
        }
    }
    plan.timed = std::move(passed);
}

// Times every mode's surviving kernels at one context, run by run in turn, on one problem: the
// shape's timing problem, the one `tune` times (its checks ran on fresh data before).
std::vector<tools::PagedBenchResult> bench_paged_context(const BenchOptions& o, Device& device, tools::DeviceTimer& timer,
                                                   const std::vector<PagedModePlan>& plans, int context) {
    const tools::PagedBenchShape& s = plans.front().result.shape;
    tools::DevicePagedProblem problem(
        device, make_paged_problem(tools::paged_timing_spec(s, context, tools::paged_timing_seed(s, context))));
    std::vector<tools::DeviceTimer::Launch> launches;
    for (const PagedModePlan& plan : plans) {
        const bool clean = tools::clean_logits_of(plan.result.shape);
        for (const TimedKernel& timed : plan.timed) {
            launches.push_back([&problem, clean, name = timed.name](void* stream) {
                problem.run(PagedMqaLogitsOptions{.clean_logits = clean, .stream = stream, .variant = name});
            });
        }
    }
    const std::vector<tools::Timing> timings =
        launches.empty() ? std::vector<tools::Timing>{}
                         : timer.time_interleaved(launches, {.warmup_runs = o.warmup, .timed_runs = o.runs});
    std::vector<tools::PagedBenchResult> results;
    std::size_t next = 0;
    for (const PagedModePlan& plan : plans) {
        tools::PagedBenchResult r = plan.result;
        r.context = context;
        r.floor_bytes = tools::paged_floor_bytes(problem.host(), tools::clean_logits_of(r.shape));
        for (const TimedKernel& timed : plan.timed) {
            const tools::Timing& t = timings[next++];
            if (timed.baseline_slot) {
                r.baseline = t;
            } else if (!plan.compare_candidates) {
                r.chosen = t;
            } else {
                r.variants_us[timed.name] = t.median_us;
                if (!r.chosen || t.median_us < r.chosen->median_us) {
                    r.kernel = timed.name;
                    r.chosen = t;
                }
            }
        }
        if (r.kernel.empty()) r.kernel = "(no candidate passed)";
        results.push_back(std::move(r));
    }
    return results;
}

}  // namespace

int run_paged_bench(const BenchOptions& o) {
    const std::vector<tools::PagedBenchShape> shapes = load_paged_shapes(o);
    check_requested_fit(o, shapes, std::nullopt);
    const DriverStatus status = live_driver_status();
    MQAJIT_CHECK_KIND(unsupported, status.available, "bench needs a GPU: {}", status.message);
    Device& device = *live_backend().current_device();
    check_requested_fit(o, shapes, Arch::parse(device.arch()));
    tools::DeviceTimer timer(device);

    nlohmann::json rows = nlohmann::json::array();
    int failures = 0;
    if (!o.json) {
        fmt::print("# {} ({}, {} SMs), paged_mqa_logits, 2-D context lens, each request's context 0.7-1.3x the "
                   "average, median of {} runs, L2 flushed, a shape's kernels (of every mode given) timed in turn{}\n",
                   device.name(), device.arch(), device.multiprocessor_count(), o.runs,
                   o.check ? ", each checked against the reference kernel first" : "");
        fmt::print("{}\n", tools::paged_bench_table_header());
    }
    for (const std::vector<tools::PagedBenchShape>& modes : tools::group_modes_of_a_shape(shapes)) {
        std::vector<PagedModePlan> plans;
        for (const tools::PagedBenchShape& mode : modes) {
            plans.push_back(plan_paged_mode(o, device, mode));
            if (o.check) check_paged_plan(plans.back(), device, failures);
        }
        for (int context : modes.front().contexts) {
            for (const tools::PagedBenchResult& result : bench_paged_context(o, device, timer, plans, context)) {
                rows.push_back(tools::paged_bench_json_row(result));
                if (!o.json) fmt::print("{}\n", tools::paged_bench_table_line(result));
            }
            std::fflush(stdout);
        }
    }
    if (o.json) fmt::print("{}\n", rows.dump(2));
    if (!o.json_file.empty()) tools::write_tune_json(o.json_file, rows);
    return failures ? kCheckFailed : kOk;
}

}  // namespace mqajit::cli
