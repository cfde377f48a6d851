// mqajit bench: times mqa_logits on the GLM-5 (or given) shapes with causal masks against the
// baseline kernel in the same run, on the live GPU (NVIDIA or AMD); device events, L2 flushed
// before each run, median. With --clean-logits 0,1 a shape's kernels of both modes are timed in
// turn in one measurement and printed one line per mode, side by side. The decode op
// (--op paged_mqa_logits) is timed by cmd_bench_paged.cpp.

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "core/check.hpp"
#include "core/files.hpp"
#include "runtime/backend.hpp"
#include "runtime/dispatch.hpp"
#include "tools/cli/bench_options.hpp"
#include "tools/cli/commands.hpp"
#include "tools/common/bench_output.hpp"
#include "tools/common/device_problem.hpp"
#include "tools/common/shapes.hpp"
#include "tools/common/timing.hpp"
#include "tools/common/tuner.hpp"
#include "variants/arch.hpp"

namespace mqajit::cli {
namespace {

// "all": every variant the registry allows for the shape; "a,b,c": those; otherwise none (one kernel).
std::vector<std::string> candidate_variants(const std::string& spec, Device& device, const tools::BenchShape& s) {
    std::vector<std::string> names;
    if (spec == "all") {
        // The tuner's candidates without the baseline, which bench times on its own.
        names = tools::tuning_candidates(device.arch(), s, {"baseline"});
        MQAJIT_CHECK_KIND(unsupported, !names.empty(), "no variant can run on {} at H={} D={}",
                          Arch::parse(device.arch()).name, s.heads, s.head_dim);
    } else {
        names = listed_variants(spec);
    }
    return names;
}

// The shapes to time, each in one mode (tools::in_modes): a shape list's shapes in every mode
// --clean-logits names (default 0), a file's rows in their own mode where they say one.
std::vector<tools::BenchShape> load_shapes(const BenchOptions& o) {
    std::optional<std::vector<int>> modes;
    if (o.clean_logits) modes = tools::parse_clean_logits_modes("--clean-logits", *o.clean_logits);
    std::vector<tools::BenchShape> shapes;
    const std::string which = o.shapes.value_or("glm5");
    if (which == "glm5") shapes = tools::glm5_shapes();
    else if (which == "deepseek") shapes = tools::deepseek_v32_shapes();
    else shapes = tools::read_shapes_csv(which);
    return tools::in_modes(shapes, modes);
}

// What one mode of a shape times: `timed` (the requested or tuned kernel, or the candidates),
// then the baseline, whose timing comes last.
struct ModePlan {
    tools::BenchResult result;
    std::vector<std::string> timed;
    bool compare_candidates = false;
};

ModePlan plan_mode(const BenchOptions& o, Device& device, const tools::BenchShape& s) {
    ModePlan plan;
    plan.result = tools::BenchResult{.shape = s, .arch = Arch::parse(device.arch()).name,
                                     .cu_num = device.multiprocessor_count(), .kv_splits = o.kv_splits,
                                     .logits_dtype = o.logits_dtype, .checked = o.check};
    plan.timed = candidate_variants(o.variant, device, s);
    plan.compare_candidates = !plan.timed.empty();
    if (plan.compare_candidates) {
        plan.result.reason = "fastest of the candidates";
    } else {
        const ProblemShape shape{.heads = s.heads, .head_dim = s.head_dim, .seq_len = s.seq_len, .seq_len_kv = s.seq_len_kv,
                                 .logits_bf16 = o.logits_dtype == "bfloat16"};
        const KernelChoice choice = Dispatcher::instance().choose(shape, tools::clean_logits_of(s), o.variant);
        plan.result.kernel = choice.variant ? choice.variant->name() : "baseline";
        plan.result.reason = choice.reason;
        plan.timed.push_back(o.variant);
    }
    plan.timed.push_back("baseline");
    return plan;
}

// Times the modes of one shape together, each kernel run by run in turn with the others, so the
// GPU's clocks drifting during the measurement cannot favour one of them (or one mode).
std::vector<tools::BenchResult> bench_shape(const BenchOptions& o, Device& device, tools::DeviceTimer& timer,
                                            const std::vector<tools::BenchShape>& modes, std::uint64_t seed,
                                            int& failures) {
    const tools::BenchShape& s = modes.front();
    tools::DeviceProblem problem(device,
                                 tools::make_problem(s.seq_len, s.seq_len_kv, s.heads, s.head_dim,
                                                     tools::MaskKind::causal, seed),
                                 o.logits_dtype == "bfloat16" ? DType::bfloat16 : DType::float32);
    auto options_for = [&](const tools::BenchShape& mode, const std::string& variant, void* stream) {
        return MqaLogitsOptions{.clean_logits = tools::clean_logits_of(mode), .stream = stream, .variant = variant,
                                .kv_splits = variant == "baseline" ? 0 : o.kv_splits};
    };
    std::vector<ModePlan> plans;
    std::vector<tools::DeviceTimer::Launch> launches;
    for (const tools::BenchShape& mode : modes) {
        plans.push_back(plan_mode(o, device, mode));
        for (const std::string& name : plans.back().timed)
            launches.push_back([&, mode, name](void* stream) { problem.run(options_for(mode, name, stream)); });
    }
    const std::vector<tools::Timing> timings =
        timer.time_interleaved(launches, {.warmup_runs = o.warmup, .timed_runs = o.runs});

    std::vector<tools::BenchResult> results;
    std::size_t next = 0;
    for (ModePlan& plan : plans) {
        tools::BenchResult& r = plan.result;
        const std::size_t num_kernels = plan.timed.size() - 1;
        r.chosen = timings[next];
        r.baseline = timings[next + num_kernels];
        if (plan.compare_candidates) {
            for (std::size_t k = 0; k < num_kernels; ++k) {
                r.variants_us[plan.timed[k]] = timings[next + k].median_us;
                if (r.kernel.empty() || timings[next + k].median_us < r.chosen.median_us) {
                    r.kernel = plan.timed[k];
                    r.chosen = timings[next + k];
                }
            }
        }
        next += plan.timed.size();
        r.flops = problem.host().flops();
        if (o.check) {
            for (const std::string& variant : {plan.compare_candidates ? r.kernel : o.variant, std::string("baseline")}) {
                const auto check = tools::check_against_reference(problem, options_for(r.shape, variant, nullptr));
                if (!check.passed(tools::kMaxCalcDiff)) {
                    ++failures;
                    r.verdict += fmt::format(" CHECK FAILED {}", check.summary());
                }
            }
        }
        results.push_back(std::move(r));
    }
    return results;
}

int run_bench(const BenchOptions& o) {
    const std::vector<tools::BenchShape> shapes = load_shapes(o);
    const DriverStatus status = live_driver_status();
    MQAJIT_CHECK_KIND(unsupported, status.available, "bench needs a GPU: {}", status.message);
    Device& device = *live_backend().current_device();
    tools::DeviceTimer timer(device);

    nlohmann::json rows = nlohmann::json::array();
    int failures = 0;
    if (!o.json) {
        fmt::print("# {} ({}, {} SMs), causal masks, {} logits, median of {} runs, L2 flushed, a shape's kernels (of "
                   "every mode given) timed in turn\n", device.name(), device.arch(), device.multiprocessor_count(),
                   o.logits_dtype, o.runs);
        fmt::print("{}\n", tools::bench_table_header());
    }
    std::uint64_t seed = 1;
    for (const std::vector<tools::BenchShape>& modes : tools::group_modes_of_a_shape(shapes)) {
        for (const tools::BenchResult& result : bench_shape(o, device, timer, modes, seed++, failures)) {
            rows.push_back(tools::bench_json_row(result));
            if (!o.json) fmt::print("{}\n", tools::bench_table_line(result));
        }
        std::fflush(stdout);
    }
    if (o.json) fmt::print("{}\n", rows.dump(2));
    if (!o.json_file.empty()) write_file_atomically(o.json_file, rows.dump(2) + "\n");
    return failures ? kCheckFailed : kOk;
}

// What the other operator's options would change: refused rather than ignored.
void check_options_of_op(const BenchOptions& o) {
    const bool decode = o.op == "paged_mqa_logits";
    const bool topk = o.op == "mqa_topk";
    MQAJIT_CHECK(topk || !o.k, "--k goes with --op mqa_topk");
    MQAJIT_CHECK(!topk || (o.variant.empty() && !o.clean_logits && o.kv_splits == 0 && o.logits_dtype == "float32" &&
                           !o.decode_flags_given()),
                 "bench --op mqa_topk times each path as served (--shapes, --k, --runs, --warmup, --check, --json); "
                 "--variant, --clean-logits, --kv-splits, --logits-dtype and the decode shape flags are not its own "
                 "(`mqajit tune --op mqa_topk` times each kernel)");
    MQAJIT_CHECK(decode || !o.decode_flags_given(), "--batch, --next-n, --heads, --head-dim, --block-kv and "
                 "--context-len give decode shapes: add --op paged_mqa_logits");
    MQAJIT_CHECK(!decode || o.kv_splits == 0, "--kv-splits is for mqa_logits (prefill) kernels; paged_mqa_logits "
                 "kernels split the cache blocks over the SMs themselves");
    MQAJIT_CHECK(!decode || o.logits_dtype == "float32", "--logits-dtype is for mqa_logits (prefill); "
                 "paged_mqa_logits writes float32 logits");
    MQAJIT_CHECK(!decode || !o.shapes || !o.decode_flags_given(), "give decode shapes either with --shapes "
                 "(glm5, deepseek or a CSV) or with --batch/--next-n/--heads/--context-len, not both");
}

}  // namespace

std::vector<std::string> listed_variants(const std::string& spec) {
    std::vector<std::string> names;
    if (spec.find(',') == std::string::npos) return names;
    std::size_t begin = 0;
    while (begin <= spec.size()) {
        const std::size_t end = std::min(spec.find(',', begin), spec.size());
        if (end > begin) names.push_back(spec.substr(begin, end - begin));
        begin = end + 1;
    }
    return names;
}

void add_bench_command(CLI::App& app, CommandContext& context) {
    auto options = std::make_shared<BenchOptions>();
    CLI::App* command = app.add_subcommand(
        "bench", "Time mqa_logits (or, with --op paged_mqa_logits, the decode op) against the baseline kernel on the GPU; "
                 "--op mqa_topk times each top-k path against mqa_logits");
    add_op_option(*command, options->op, true);
    command->add_option("--k", options->k, "mqa_topk: keys selected per row, 1 to 4096 (default 2048)")
        ->check(CLI::Range(1, 4096));
    command->add_option("--shapes,--shapes-file", options->shapes,
                        "glm5 (default), deepseek, or a CSV: for mqa_logits seq_len,seq_len_kv[,heads,head_dim,"
                        "clean_logits]; for paged_mqa_logits batch,next_n,heads,context_len[,head_dim,block_kv,"
                        "clean_logits] like model_configs/paged_mqa_logits_untuned_*.csv (glm5 and deepseek are "
                        "those files)");
    command->add_option("--batch", options->batch, "Decode shapes: requests, e.g. 1,32,128 (with --context-len)");
    command->add_option("--next-n", options->next_n, "Decode shapes: query tokens per request, 1 to 4 (default 1)");
    command->add_option("--heads", options->heads, "Decode shapes: heads, 32 or 64 (default 64)");
    command->add_option("--head-dim", options->head_dim, "Decode shapes: head dimension (default 128)")
        ->check(CLI::PositiveNumber);
    command->add_option("--block-kv", options->block_kv, "Decode shapes: tokens per cache block (default 64)")
        ->check(CLI::PositiveNumber);
    command->add_option("--context-len", options->context_len,
                        "Decode shapes: average contexts, e.g. 4096,32768 (each request's uniform in 0.7-1.3x)");
    command->add_option("--variant", options->variant,
                        "Time this variant (or 'baseline') instead of the tuned choice; 'all' or a comma-separated "
                        "list times each candidate and reports the fastest");
    command->add_option("--clean-logits", options->clean_logits,
                        "The mode to time in: 0 (no -inf outside the windows, what engines call; the default), 1, "
                        "or 0,1 for both side by side, timed in turn in one measurement. A --shapes file's rows "
                        "that say their mode keep it (and run only if listed)");
    command->add_option("--kv-splits", options->kv_splits,
                        "Force this many KV splits per query block on the timed kernels (wgmma family; 0: its own rule). "
                        "The baseline keeps its own rule")
        ->check(CLI::Range(0, 1 << 20));
    command->add_option("--logits-dtype", options->logits_dtype,
                        "The logits the prefill kernels write: float32 (default) or bfloat16 (rounded in the kernel; "
                        "--check then compares with the reference kernel's bf16 logits)")
        ->check(CLI::IsMember({"float32", "bfloat16"}));
    command->add_option("--runs", options->runs, "Timed runs per kernel (median reported)")->check(CLI::Range(3, 100000));
    command->add_option("--warmup", options->warmup, "Warm-up runs per kernel")->check(CLI::Range(0, 1000));
    command->add_flag("--check", options->check,
                      "Also check each kernel against the reference kernel on fresh data (decode: before it is "
                      "timed; a kernel that fails is reported and not timed)");
    command->add_flag("--json", options->json, "Print JSON");
    command->add_option("--json-file", options->json_file, "Also write the JSON rows to this file");
    command->callback([options, &context] {
        check_options_of_op(*options);
        if (options->op == "paged_mqa_logits") context.exit_code = run_paged_bench(*options);
        else if (options->op == "mqa_topk") context.exit_code = run_topk_bench(*options);
        else context.exit_code = run_bench(*options);
    });
}

}  // namespace mqajit::cli
