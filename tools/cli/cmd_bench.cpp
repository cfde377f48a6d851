// mqajit bench: times mqa_logits on the GLM-5 (or given) shapes with causal masks against the
// baseline kernel in the same run; CUDA events, L2 flushed before each run, median.

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "runtime/backend.hpp"
#include "runtime/dispatch.hpp"
#include "tools/cli/commands.hpp"
#include "tools/common/device_problem.hpp"
#include "tools/common/roofline.hpp"
#include "tools/common/shapes.hpp"
#include "tools/common/timing.hpp"
#include "tools/common/tuner.hpp"
#include "variants/arch.hpp"

namespace mqajit::cli {
namespace {

struct BenchOptions {
    std::string shapes = "glm5";
    std::string variant;  // empty: what dispatch picks
    int kv_splits = 0;    // forwarded to MqaLogitsOptions::kv_splits for every kernel but the baseline
    int runs = 50;
    int warmup = 5;
    bool check = false;
    bool json = false;
    std::string json_file;  // also write the JSON rows here
};

// "all": every variant the registry allows for the shape; "a,b,c": those; otherwise none (one kernel).
std::vector<std::string> candidate_variants(const std::string& spec, Device& device, const tools::BenchShape& s) {
    std::vector<std::string> names;
    if (spec == "all") {
        // The tuner's candidates without the baseline, which bench times on its own.
        names = tools::tuning_candidates(device.arch(), s, {"baseline"});
        MQAJIT_CHECK_KIND(unsupported, !names.empty(), "no variant can run on {} at H={} D={}",
                          Arch::parse(device.arch()).name, s.heads, s.head_dim);
    } else if (spec.find(',') != std::string::npos) {
        std::size_t begin = 0;
        while (begin <= spec.size()) {
            const std::size_t end = std::min(spec.find(',', begin), spec.size());
            if (end > begin) names.push_back(spec.substr(begin, end - begin));
            begin = end + 1;
        }
    }
    return names;
}

std::vector<tools::BenchShape> load_shapes(const std::string& spec) {
    if (spec == "glm5") return tools::glm5_shapes();
    if (spec == "deepseek") return tools::deepseek_v32_shapes();
    return tools::read_shapes_csv(spec);
}

}  // namespace

void add_bench_command(CLI::App& app, CommandContext& context) {
    auto options = std::make_shared<BenchOptions>();
    CLI::App* command = app.add_subcommand("bench", "Time mqa_logits against the baseline kernel on the GPU");
    command->add_option("--shapes", options->shapes, "glm5 (default), deepseek, or a CSV with seq_len,seq_len_kv[,heads,head_dim]");
    command->add_option("--variant", options->variant,
                        "Time this variant (or 'baseline') instead of the tuned choice; 'all' or a comma-separated "
                        "list times each candidate and reports the fastest");
    command->add_option("--kv-splits", options->kv_splits,
                        "Force this many KV splits per query block on the timed kernels (wgmma family; 0: its own rule). "
                        "The baseline keeps its own rule")
        ->check(CLI::Range(0, 1 << 20));
    command->add_option("--runs", options->runs, "Timed runs per kernel (median reported)")->check(CLI::Range(3, 100000));
    command->add_option("--warmup", options->warmup, "Warm-up runs per kernel")->check(CLI::Range(0, 1000));
    command->add_flag("--check", options->check, "Also check each kernel against the reference once");
    command->add_flag("--json", options->json, "Print JSON");
    command->add_option("--json-file", options->json_file, "Also write the JSON rows to this file");
    command->callback([options, &context] {
        const DriverStatus status = backend_for(Vendor::nvidia).driver_status();
        MQAJIT_CHECK_KIND(unsupported, status.available, "bench needs a GPU: {}", status.message);
        Device& device = *backend_for(Vendor::nvidia).current_device();
        const auto shapes = load_shapes(options->shapes);
        tools::DeviceTimer timer(device);
        const tools::TimingOptions timing_options{.warmup_runs = options->warmup, .timed_runs = options->runs};

        nlohmann::json rows = nlohmann::json::array();
        int failures = 0;
        if (!options->json) {
            fmt::print("# {} ({}, {} SMs), causal masks, median of {} runs, L2 flushed, a shape's kernels timed in turn\n", device.name(), device.arch(),
                       device.multiprocessor_count(), options->runs);
            fmt::print("{:>3} {:>6} {:>6}  {:<36} {:>9} {:>7} {:>9} {:>7} {:>8} {:>7}\n", "H", "S", "N", "kernel", "us",
                       "TFLOP/s", "base us", "speedup", "floor us", "%floor");
        }
        std::uint64_t seed = 1;
        for (const tools::BenchShape& s : shapes) {
            tools::DeviceProblem problem(device, tools::make_problem(s.seq_len, s.seq_len_kv, s.heads, s.head_dim,
                                                                     tools::MaskKind::causal, seed++));
            const ProblemShape shape{.heads = s.heads, .head_dim = s.head_dim, .seq_len = s.seq_len, .seq_len_kv = s.seq_len_kv};
            auto options_for = [&](const std::string& variant, void* stream) {
                return MqaLogitsOptions{.stream = stream, .variant = variant,
                                        .kv_splits = variant == "baseline" ? 0 : options->kv_splits};
            };
            auto launch_of = [&](const std::string& variant) -> tools::DeviceTimer::Launch {
                return [&, variant](void* stream) { problem.run(options_for(variant, stream)); };
            };
            // The kernels of a shape are timed run by run in turn, the baseline among them, so that
            // the GPU's clocks drifting during the measurement cannot favour one of them.
            std::vector<std::string> timed = candidate_variants(options->variant, device, s);
            const bool compare_candidates = !timed.empty();
            std::string kernel, reason;
            if (!compare_candidates) {
                const KernelChoice choice = Dispatcher::instance().choose(shape, options->variant);
                kernel = choice.variant ? choice.variant->name() : "baseline";
                reason = choice.reason;
                timed.push_back(options->variant);
            }
            timed.push_back("baseline");
            std::vector<tools::DeviceTimer::Launch> launches;
            for (const std::string& name : timed) launches.push_back(launch_of(name));
            const std::vector<tools::Timing> timings = timer.time_interleaved(launches, timing_options);
            const tools::Timing baseline = timings.back();
            tools::Timing chosen = timings.front();
            nlohmann::json per_variant = nlohmann::json::object();
            if (compare_candidates) {
                for (std::size_t k = 0; k + 1 < timed.size(); ++k) {
                    per_variant[timed[k]] = timings[k].median_us;
                    if (kernel.empty() || timings[k].median_us < chosen.median_us) {
                        kernel = timed[k];
                        chosen = timings[k];
                    }
                }
                reason = "fastest of the candidates";
            }
            const double flops = problem.host().flops();
            const double floor = tools::floor_us(flops, s.seq_len, s.seq_len_kv);
            std::string verdict;
            if (options->check) {
                for (const std::string& variant : {per_variant.empty() ? options->variant : kernel, std::string("baseline")}) {
                    const auto result = tools::check_against_reference(problem, options_for(variant, nullptr));
                    if (!result.passed(tools::kMaxCalcDiff)) {
                        ++failures;
                        verdict += fmt::format(" CHECK FAILED {}", result.summary());
                    }
                }
            }
            rows.push_back({{"arch", Arch::parse(device.arch()).name}, {"cu_num", device.multiprocessor_count()},
                            {"heads", s.heads}, {"head_dim", s.head_dim}, {"seq_len", s.seq_len},
                            {"seq_len_kv", s.seq_len_kv}, {"kernel", kernel}, {"reason", reason}, {"variants_us", per_variant},
                            {"us", chosen.median_us}, {"min_us", chosen.min_us}, {"flops", flops},
                            {"tflops", flops / chosen.median_us * 1e-6},
                            {"baseline_us", baseline.median_us}, {"floor_us", floor}, {"runs", chosen.runs},
                            {"kv_splits", options->kv_splits}, {"checked", options->check},
                            {"check_failed", !verdict.empty()}});
            if (!options->json) {
                fmt::print("{:>3} {:>6} {:>6}  {:<36} {:>9.1f} {:>7.0f} {:>9.1f} {:>6.2f}x {:>8.1f} {:>6.0f}%{}\n", s.heads,
                           s.seq_len, s.seq_len_kv, kernel, chosen.median_us, flops / chosen.median_us * 1e-6,
                           baseline.median_us, baseline.median_us / chosen.median_us, floor,
                           100.0 * floor / chosen.median_us, verdict);
                std::fflush(stdout);
            }
        }
        if (options->json) fmt::print("{}\n", rows.dump(2));
        if (!options->json_file.empty()) {
            std::ofstream file(options->json_file);
            file << rows.dump(2) << "\n";
            MQAJIT_CHECK_KIND(io, file.good(), "could not write {}", options->json_file);
        }
        context.exit_code = failures ? kCheckFailed : kOk;
    });
}

}  // namespace mqajit::cli
