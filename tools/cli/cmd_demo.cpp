// mqajit demo: computes a GLM-5 shape on the GPU, checks it against the reference kernel and prints
// the kernel and its time; with no GPU, shows which tuned row would serve the shape and why.

#include <fmt/format.h>

#include "runtime/backend.hpp"
#include "runtime/dispatch.hpp"
#include "tools/cli/arch_option.hpp"
#include "tools/cli/commands.hpp"
#include "tools/common/device_problem.hpp"
#include "tools/common/roofline.hpp"
#include "tools/common/timing.hpp"
#include "tuning_db/tuning_db.hpp"

namespace mqajit::cli {
namespace {

struct DemoOptions {
    int seq_len = 4096;
    int seq_len_kv = 8192;
    int heads = 32;
    int head_dim = 128;
    std::optional<std::string> arch;  // for the no-GPU explanation
    int cu_num = 132;
    int clean_logits = 0;  // the callers' mode
};

void explain_without_gpu(const DemoOptions& o, const DriverStatus& status) {
    const Arch arch = o.arch || settings().arch_override ? resolve_arch(o.arch) : Arch::parse("sm_90a");
    const ShapeKey key{.arch = arch.name, .cu_num = o.cu_num, .heads = o.heads, .head_dim = o.head_dim,
                       .clean_logits = o.clean_logits, .seq_len = o.seq_len, .seq_len_kv = o.seq_len_kv};
    fmt::print("GLM-5 shape: S={} N={} H={} D={} clean_logits={}; lookup for {} with {} SMs/CUs:\n", o.seq_len,
               o.seq_len_kv, o.heads, o.head_dim, o.clean_logits, arch.name, o.cu_num);
    const LookupResult result = TuningDb::instance().explain(key);
    for (const std::string& step : result.steps) fmt::print("  - {}\n", step);
    if (result.row) {
        fmt::print("would serve: {} variant {} (from {})\n", result.row->backend, result.row->variant, result.row->origin);
    } else {
        fmt::print("would serve: the baseline kernel (no tuned row)\n");
    }
    fmt::print("no GPU found: {}\n", status.message);
}

int run_on_gpu(const DemoOptions& o) {
    Device& device = *live_backend().current_device();
    fmt::print("device: {} ({}, {} SMs, driver {})\n", device.name(), device.arch(), device.multiprocessor_count(),
               device.driver_version());
    const ProblemShape shape{.heads = o.heads, .head_dim = o.head_dim, .seq_len = o.seq_len, .seq_len_kv = o.seq_len_kv};
    const bool clean_logits = o.clean_logits != 0;
    const KernelChoice choice = Dispatcher::instance().choose(shape, clean_logits, "");
    fmt::print("shape S={} N={} H={} D={} clean_logits={} (causal): {} ({})\n", o.seq_len, o.seq_len_kv, o.heads,
               o.head_dim, o.clean_logits, choice.variant ? choice.variant->name() : "baseline", choice.reason);

    tools::DeviceProblem problem(device, tools::make_problem(o.seq_len, o.seq_len_kv, o.heads, o.head_dim,
                                                             tools::MaskKind::causal, 20261130));
    const tools::CheckResult check =
        tools::check_against_reference(problem, MqaLogitsOptions{.clean_logits = clean_logits});
    fmt::print("check against the reference kernel: {} -> {}\n", check.summary(),
               check.passed(tools::kMaxCalcDiff) ? "PASS" : "FAIL");

    tools::DeviceTimer timer(device);
    const tools::Timing timing = timer.time(
        [&](void* stream) { problem.run(MqaLogitsOptions{.clean_logits = clean_logits, .stream = stream}); },
        tools::TimingOptions{.timed_runs = 30});
    const double flops = problem.host().flops();
    fmt::print("time: {:.1f} us median of {} (L2 flushed), {:.0f} TFLOP/s, {:.0f}% of the floor\n", timing.median_us,
               timing.runs, flops / timing.median_us * 1e-6,
               100.0 * tools::floor_us(flops, o.seq_len, o.seq_len_kv) / timing.median_us);
    return check.passed(tools::kMaxCalcDiff) ? kOk : kCheckFailed;
}

}  // namespace

void add_demo_command(CLI::App& app, CommandContext& context) {
    auto options = std::make_shared<DemoOptions>();
    CLI::App* command = app.add_subcommand("demo", "Compute one GLM-5 shape, check it and time it (or explain, without a GPU)");
    command->add_option("--seq-len", options->seq_len, "Query rows S")->check(CLI::PositiveNumber);
    command->add_option("--seq-len-kv", options->seq_len_kv, "KV rows N")->check(CLI::PositiveNumber);
    command->add_option("--heads", options->heads, "Heads H")->check(CLI::IsMember({32, 64}));
    command->add_option("--head-dim", options->head_dim, "Head dim D")->check(CLI::IsMember({64, 128}));
    command->add_option("--arch", options->arch, "Arch for the no-GPU explanation (default MQAJIT_ARCH or sm_90a)");
    command->add_option("--cu-num", options->cu_num, "SM/CU count for the no-GPU explanation (default 132)");
    command->add_option("--clean-logits", options->clean_logits,
                        "The call's mode: 0 (no -inf outside the windows, what engines call; the default) or 1")
        ->check(CLI::IsMember({0, 1}));
    command->callback([options, &context] {
        const DriverStatus status = live_driver_status();
        if (!status.available) {
            explain_without_gpu(*options, status);
            context.exit_code = kOk;
            return;
        }
        context.exit_code = run_on_gpu(*options);
    });
}

}  // namespace mqajit::cli
