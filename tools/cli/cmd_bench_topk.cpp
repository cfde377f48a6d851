// mqajit bench --op mqa_topk: times mqa_topk on the GLM-5 (or DeepSeek-V3.2, or given) prefill
// shapes on the live GPU, each path side by side in one measurement (device events, L2 flushed
// before each run, median): the call as served (path auto), the fused path, the unfused path, and
// mqa_logits alone (clean_logits=false, the table's kernel) as the reference point the fused path
// must beat, where its S x N logits fit in 4 GiB. Causal windows. With --check each path is first
// checked exactly on fresh data (the host's top k of the logits of the kernel it selects by); one
// that fails is reported and not timed. A path that cannot serve a shape is reported, not timed.

#include <fmt/format.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/check.hpp"
#include "mqajit/mqa_logits.hpp"
#include "mqajit/mqa_topk.hpp"
#include "runtime/backend.hpp"
#include "tools/cli/bench_options.hpp"
#include "tools/cli/commands.hpp"
#include "tools/common/device_problem.hpp"
#include "tools/common/shapes.hpp"
#include "tools/common/timing.hpp"
#include "tools/common/topk_problem.hpp"
#include "tools/common/topk_tuner.hpp"
#include "tools/common/tune_json.hpp"

namespace mqajit::cli {
namespace {

constexpr std::int64_t kMaxLogitsBytes = std::int64_t{4} << 30;

std::vector<tools::TopkBenchShape> load_topk_shapes(const BenchOptions& o) {
    const std::string which = o.shapes.value_or("glm5");
    std::vector<tools::BenchShape> shapes = which == "glm5"       ? tools::glm5_shapes()
                                            : which == "deepseek" ? tools::deepseek_v32_shapes()
                                                                  : tools::read_shapes_csv(which);
    return tools::topk_shapes(shapes, o.k.value_or(2048));
}

struct Path {
    std::string name;  // "auto", "fused", "unfused"
    MqaTopkPath path;
};
const Path kPaths[] = {{"auto", MqaTopkPath::automatic}, {"fused", MqaTopkPath::fused}, {"unfused", MqaTopkPath::unfused}};

// One path at one shape: what serves it, or why it cannot be timed.
struct PathOutcome {
    std::string kernel;
    std::string problem;  // not timed: it cannot serve the shape, or failed its check
    double us = 0;
};

PathOutcome probe_path(tools::DeviceTopkProblem& problem, const Path& path) {
    PathOutcome outcome;
    DispatchReport report;
    try {
        problem.run(MqaTopkOptions{.path = path.path, .report = &report});
        outcome.kernel = report.kernel;
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::unsupported) throw;
        outcome.problem = e.what();
    }
    return outcome;
}

}  // namespace

int run_topk_bench(const BenchOptions& o) {
    const DriverStatus status = live_driver_status();
    MQAJIT_CHECK_KIND(unsupported, status.available, "bench needs a GPU: {}", status.message);
    Device& device = *live_backend().current_device();
    const std::vector<tools::TopkBenchShape> shapes = load_topk_shapes(o);
    tools::DeviceTimer timer(device);
    const tools::TimingOptions timing{.warmup_runs = o.warmup, .timed_runs = o.runs};
    nlohmann::json rows = nlohmann::json::array();
    int failures = 0;
    for (const tools::TopkBenchShape& shape : shapes) {
        const std::uint64_t seed = 0x70b4 + static_cast<std::uint64_t>(shape.seq_len) * 131 + shape.seq_len_kv;
        const tools::HostProblem host =
            tools::make_problem(shape.seq_len, shape.seq_len_kv, shape.heads, shape.head_dim, tools::MaskKind::causal, seed);
        tools::DeviceTopkProblem problem(device, host, shape.k);
        std::map<std::string, PathOutcome> outcomes;
        for (const Path& path : kPaths) outcomes[path.name] = probe_path(problem, path);
        if (o.check) {
            tools::DeviceTopkProblem small(
                device,
                tools::make_problem(std::min(shape.seq_len, tools::kTopkCheckRows), shape.seq_len_kv, shape.heads,
                                    shape.head_dim, tools::MaskKind::causal, tools::fresh_topk_seed()),
                shape.k);
            for (const Path& path : kPaths) {
                PathOutcome& outcome = outcomes[path.name];
                if (!outcome.problem.empty()) continue;
                const tools::TopkCheck check = tools::check_topk_call(small, MqaTopkOptions{.path = path.path});
                if (!check.passed) {
                    outcome.problem = fmt::format("CHECK FAILED ({}): {}", check.kernel, check.problem);
                    ++failures;
                }
            }
        }
        std::vector<std::string> timed;
        std::vector<tools::DeviceTimer::Launch> launches;
        for (const Path& path : kPaths) {
            if (!outcomes[path.name].problem.empty()) continue;
            timed.push_back(path.name);
            launches.push_back([&problem, p = path.path](void* stream) {
                problem.run(MqaTopkOptions{.stream = stream, .path = p});
            });
        }
        std::unique_ptr<tools::DeviceProblem> logits;
        const std::int64_t logits_bytes = std::int64_t{shape.seq_len} * shape.seq_len_kv * 4;
        if (logits_bytes <= kMaxLogitsBytes) {
            logits = std::make_unique<tools::DeviceProblem>(device, host);
            timed.push_back("logits");
            launches.push_back([&logits](void* stream) {
                logits->run(MqaLogitsOptions{.clean_logits = false, .stream = stream});
            });
        }
        const std::vector<tools::Timing> times = timer.time_interleaved(launches, timing);
        std::optional<double> logits_us;
        for (std::size_t i = 0; i < timed.size(); ++i) {
            if (timed[i] == "logits") logits_us = times[i].median_us;
            else outcomes[timed[i]].us = times[i].median_us;
        }

        std::string line = tools::topk_shape_label(shape) + ":";
        nlohmann::json row = {{"tool", "mqajit bench"}, {"op", "mqa_topk"}, {"arch", Arch::parse(device.arch()).name},
                              {"cu_num", device.multiprocessor_count()}, {"heads", shape.heads},
                              {"head_dim", shape.head_dim}, {"k", shape.k}, {"seq_len", shape.seq_len},
                              {"seq_len_kv", shape.seq_len_kv}, {"runs", o.runs}};
        if (logits_us) {
            line += fmt::format(" logits {:.1f} us |", *logits_us);
            row["logits_us"] = *logits_us;
        }
        for (const Path& path : kPaths) {
            const PathOutcome& outcome = outcomes[path.name];
            nlohmann::json entry = {{"kernel", outcome.kernel}};
            if (!outcome.problem.empty()) {
                line += fmt::format(" {}: not timed ({}) |", path.name, outcome.problem);
                entry["problem"] = outcome.problem;
            } else {
                line += fmt::format(" {} {:.1f} us{} ({}) |", path.name, outcome.us,
                                    logits_us ? fmt::format(" {:.2f}x logits", outcome.us / *logits_us) : "",
                                    outcome.kernel);
                entry["us"] = outcome.us;
            }
            row[path.name] = entry;
        }
        line.pop_back();
        if (!o.json) fmt::print("{}\n", line);
        rows.push_back(row);
    }
    if (o.json) fmt::print("{}\n", rows.dump(2));
    if (!o.json_file.empty()) tools::write_tune_json(o.json_file, rows);
    return failures ? kCheckFailed : kOk;
}

}  // namespace mqajit::cli
