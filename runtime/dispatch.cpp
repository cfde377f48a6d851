#include "runtime/dispatch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <tuple>

#include "codegen/baseline.hpp"
#include "codegen/family_registry.hpp"
#include "codegen/variant_registry.hpp"
#include "core/check.hpp"
#include "core/log.hpp"
#include "core/settings.hpp"
#include "runtime/arch_override.hpp"
#include "runtime/decision_memo.hpp"
#include "runtime/dispatch_support.hpp"
#include "tuning_db/tuning_db.hpp"

namespace mqajit {

struct Dispatcher::DeviceState {
    explicit DeviceState(Device& d) : device(d), arch(Arch::parse(d.arch())), limits(d.limits()) {}

    Device& device;
    const Arch arch;
    const DeviceLimits limits;
    // Requests ("" when no row matched) are kept by (heads, head_dim), then by the requested name.
    DecisionMemo<TunedRow, std::pair<int, int>, Resolved> decisions;
    std::mutex mutex;  // guards logged_shapes
    std::set<std::tuple<int, int, std::int64_t, std::int64_t, bool, bool>> logged_shapes;  // ..., clean_logits, bf16
};

namespace {

std::optional<DiskCache> make_disk_cache() {
    if (settings().disable_disk_cache) return std::nullopt;
    if (settings().cache_dir.empty()) {
        log().warn("no folder for the kernel cache (neither HOME, XDG_CACHE_HOME nor a passwd home is known); "
                   "kernels are compiled and kept in memory only. Set MQAJIT_CACHE_DIR to keep them");
        return std::nullopt;
    }
    return DiskCache(settings().cache_dir / "kernels");
}

// Writes the plan's launch-time fields and tensor maps into the kernel argument.
void fill_launch_fields(const LaunchPlan& plan, const Device& device, MqaLogitsParams& params) {
    params.num_q_blocks = plan.num_q_blocks;
    params.num_kv_splits = plan.num_kv_splits;
    encode_tensor_maps(plan, device, &params, sizeof(params));
}

}  // namespace

Dispatcher& Dispatcher::instance() {
    static Dispatcher dispatcher;
    return dispatcher;
}

Dispatcher::Dispatcher()
    : backend_(live_backend()),
      cache_(make_disk_cache(), static_cast<std::size_t>(settings().memory_cache_capacity)) {}

Dispatcher::DeviceState& Dispatcher::state_for(Device& device) {
    std::lock_guard lock(mutex_);
    auto& slot = devices_[device.ordinal()];
    if (!slot) {
        slot = std::make_unique<DeviceState>(device);
        warn_if_arch_override_differs(settings().arch_override, slot->arch);
    }
    return *slot;
}

void Dispatcher::run(MqaLogitsArgs& args, const MqaLogitsOptions& options) {
    DeviceState& state = state_for(*backend_.current_device());
    const auto [resolved, kernel] = resolve(state, args.shape, options.clean_logits, options.variant);
    if (options.report) *options.report = {resolved->variant ? resolved->variant->name() : "baseline", resolved->reason};
    launch(state, *resolved, *kernel, args, options.stream, options.pdl);
}

KernelChoice Dispatcher::choose(const ProblemShape& shape, bool clean_logits, const std::string& requested_variant) {
    return decide(state_for(*backend_.current_device()), shape, clean_logits, requested_variant);
}

KernelChoice Dispatcher::decide(DeviceState& state, const ProblemShape& shape, bool clean_logits,
                                const std::string& requested) {
    return choose_logits_kernel(TuningDb::instance(), state.arch, state.limits.multiprocessors, shape, clean_logits,
                                requested,
                                fmt::format("this {} ({})", state.device.name(), state.arch.name));
}

std::pair<const Dispatcher::Resolved*, std::shared_ptr<LoadedKernel>> Dispatcher::resolve(
    DeviceState& state, const ProblemShape& shape, bool clean_logits, const std::string& requested) {
    // NOTES: the warm path is one tuning lookup (two binary searches), one hash lookup and taking
    // the kernel from its weak reference; the rest runs once per tuned row or explicit request.
    const TunedRow* row = nullptr;
    if (requested.empty() && !settings().disable_jit)
        row = TuningDb::instance().lookup(
            logits_tuning_key(state.arch, state.limits.multiprocessors, shape, clean_logits));
    if (log().should_log(spdlog::level::debug)) log_first_decision(state, shape, clean_logits, requested);
    return state.decisions.resolve(
        row, (clean_logits ? 1 : 0) + (shape.logits_bf16 ? 2 : 0), std::pair{shape.heads, shape.head_dim}, requested,
        [&](const Resolved& decided) { return load(state, decided, shape); },
        [&] { return make_decision(state, shape, clean_logits, requested); },
        [&](const Resolved& decided, const Error& e) {
            log().warn("variant {} could not be loaded again on {}, using the baseline kernel instead: {}",
                       decided.variant->name(), state.arch.name, e.what());
            return resolve(state, shape, clean_logits, "baseline");
        });
}

void Dispatcher::log_first_decision(DeviceState& state, const ProblemShape& shape, bool clean_logits,
                                    const std::string& requested) {
    {
        std::lock_guard lock(state.mutex);
        if (!state.logged_shapes
                 .emplace(shape.heads, shape.head_dim, shape.seq_len, shape.seq_len_kv, clean_logits, shape.logits_bf16)
                 .second)
            return;
    }
    const KernelChoice choice = decide(state, shape, clean_logits, requested);
    log().debug("dispatch {} h{} d{} s{} n{} clean_logits={} logits_dtype={}: {} ({})", state.arch.name, shape.heads,
                shape.head_dim, shape.seq_len, shape.seq_len_kv, clean_logits ? 1 : 0,
                kLogitsDtypes[shape.logits_bf16 ? 1 : 0],
                choice.variant ? choice.variant->name() : "baseline", choice.reason);
}

std::pair<Dispatcher::Resolved, std::shared_ptr<LoadedKernel>> Dispatcher::make_decision(
    DeviceState& state, const ProblemShape& shape, bool clean_logits, const std::string& requested) {
    const KernelChoice choice = decide(state, shape, clean_logits, requested);
    Resolved resolved;
    resolved.variant = choice.variant;
    resolved.reason = choice.reason;
    std::shared_ptr<LoadedKernel> kernel;
    if (resolved.variant) {
        try {
            resolved.launched = *resolved.variant;
            resolved.family = &family_for(resolved.launched);
            kernel = load(state, resolved, shape);
        } catch (const Error& e) {
            if (!requested.empty()) throw;
            if (first_time(state.arch.target_id() + "|" + e.what())) {
                log().warn("variant {} is unavailable on {}, using the baseline kernel instead: {}",
                           resolved.variant->name(), state.arch.name, e.what());
            } else {
                log().debug("variant {} is unavailable on {} for the reason warned about before; using the baseline",
                            resolved.variant->name(), state.arch.name);
            }
            std::string reason = fmt::format("{} failed to build: {}", resolved.variant->name(), e.what());
            resolved = Resolved{};
            resolved.reason = std::move(reason);
        }
    }
    if (!kernel) {
        resolved.baseline = backend_.baseline(state.arch, shape.heads, shape.head_dim);
        resolved.launched = resolved.baseline->variant;
        resolved.family = &family_for(resolved.launched);
        kernel = load(state, resolved, shape);
    }
    return {std::move(resolved), std::move(kernel)};
}

std::shared_ptr<LoadedKernel> Dispatcher::load(DeviceState& state, const Resolved& resolved, const ProblemShape& shape) {
    if (resolved.baseline) return prebuilt_kernel(state, resolved.baseline->kernel);
    return backend_.generated_kernel(cache_, state.device, resolved.launched, shape.heads, shape.head_dim);
}

std::shared_ptr<LoadedKernel> Dispatcher::prebuilt_kernel(DeviceState& state, const PrebuiltKernel& kernel) {
    return load_prebuilt(cache_, state.device, state.arch, backend_, kernel);
}

void Dispatcher::launch(DeviceState& state, const Resolved& resolved, LoadedKernel& kernel, MqaLogitsArgs& args,
                        void* stream, bool pdl) {
    LaunchPlan plan = resolved.family->plan(resolved.launched, args.shape, state.limits, args.params);
    fill_launch_fields(plan, state.device, args.params);
    plan.config.programmatic_dependent_launch = pdl;
    state.device.launch(kernel, plan.config, stream, &args.params, sizeof(args.params));
}

void Dispatcher::run_topk_variant(const Variant& topk_variant, MqaLogitsArgs& args, void* stream, bool pdl) {
    DeviceState& state = state_for(*backend_.current_device());
    const std::shared_ptr<LoadedKernel> kernel =
        backend_.generated_kernel(cache_, state.device, topk_variant, args.shape.heads, args.shape.head_dim);
    LaunchPlan plan = topk_family_for(topk_variant).plan(topk_variant, args.shape, state.limits, args.params);
    fill_launch_fields(plan, state.device, args.params);
    plan.config.programmatic_dependent_launch = pdl;
    state.device.launch(*kernel, plan.config, stream, &args.params, sizeof(args.params));
}

void Dispatcher::prepare_topk_variant(const Variant& topk_variant, int heads, int head_dim) {
    DeviceState& state = state_for(*backend_.current_device());
    (void)backend_.generated_kernel(cache_, state.device, topk_variant, heads, head_dim);
}

std::pair<std::shared_ptr<LoadedKernel>, Device*> Dispatcher::topk_kernel(const char* kernel_name) {
    DeviceState& state = state_for(*backend_.current_device());
    return {prebuilt_kernel(state, backend_.topk_kernel(state.arch, kernel_name)), &state.device};
}

void Dispatcher::run_reference(MqaLogitsArgs& args, void* stream) {
    DeviceState& state = state_for(*backend_.current_device());
    const std::shared_ptr<LoadedKernel> kernel = prebuilt_kernel(state, backend_.reference(state.arch));
    state.device.launch(*kernel, reference_launch_config(args.shape), stream, &args.params, sizeof(args.params));
}

}  // namespace mqajit
