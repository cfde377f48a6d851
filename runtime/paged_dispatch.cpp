#include "runtime/paged_dispatch.hpp"

#include <fmt/format.h>

#include <set>

#include "codegen/baseline.hpp"
#include "codegen/paged_variant_support.hpp"
#include "codegen/family_registry.hpp"
#include "core/check.hpp"
#include "core/log.hpp"
#include "core/settings.hpp"
#include "runtime/decision_memo.hpp"
#include "runtime/dispatch_support.hpp"
#include "tuning_db/tuning_db.hpp"

namespace mqajit {

struct PagedDispatcher::DeviceState {
    explicit DeviceState(Device& d) : device(d), arch(Arch::parse(d.arch())), limits(d.limits()) {}

    Device& device;
    const Arch arch;
    const DeviceLimits limits;
    DecisionMemo<PagedTunedRow, CallShape, Resolved> decisions;
    std::mutex mutex;  // guards logged_shapes
    std::set<std::tuple<CallShape, int, bool>> logged_shapes;
};

namespace {

PagedShapeKey tuning_key(const Arch& arch, int multiprocessors, const PagedProblemShape& shape, bool clean_logits) {
    return PagedShapeKey{.arch = arch.name, .cu_num = multiprocessors, .next_n = shape.next_n, .heads = shape.heads,
                         .head_dim = shape.head_dim, .block_kv = shape.block_kv, .clean_logits = clean_logits ? 1 : 0,
                         .batch = shape.batch};
}

PagedDispatcher::CallShape call_shape(const PagedProblemShape& shape) {
    return {shape.heads, shape.head_dim, shape.next_n, shape.block_kv};
}

Support fits(const Arch& arch, const PagedProblemShape& shape, const Variant& variant) {
    return paged_variant_support(arch, {.heads = shape.heads, .head_dim = shape.head_dim, .next_n = shape.next_n,
                                        .block_kv = shape.block_kv},
                                 variant);
}

std::string tuned_row_reason(const PagedTunedRow& row, const PagedShapeKey& call) {
    std::string text = fmt::format("tuned row {} (batch {}", row.origin, row.key.batch);
    if (row.key.cu_num != call.cu_num) text += fmt::format("; tuned at the nearest SM count, {}", row.key.cu_num);
    if (row.key.clean_logits != call.clean_logits)
        text += fmt::format("; tuned with clean_logits={}, none with {}", row.key.clean_logits, call.clean_logits);
    return text + ")";
}

}  // namespace

PagedDispatcher& PagedDispatcher::instance() {
    static PagedDispatcher dispatcher(Dispatcher::instance().backend(), Dispatcher::instance().kernel_cache());
    return dispatcher;
}

PagedDispatcher::PagedDispatcher(Backend& backend, KernelCache& cache) : backend_(backend), cache_(cache) {}

PagedDispatcher::DeviceState& PagedDispatcher::state_for(Device& device) {
    std::lock_guard lock(mutex_);
    auto& slot = devices_[device.ordinal()];
    if (!slot) slot = std::make_unique<DeviceState>(device);
    return *slot;
}

void PagedDispatcher::run(PagedMqaLogitsArgs& args, const PagedMqaLogitsOptions& options) {
    DeviceState& state = state_for(*backend_.current_device());
    const auto [resolved, kernel] = resolve(state, args.shape, options.clean_logits, options.variant);
    if (options.report) *options.report = {resolved->variant ? resolved->variant->name() : "baseline", resolved->reason};
    LaunchPlan plan =
        paged_family_for(resolved->launched).plan(resolved->launched, args.shape, state.limits, args.params);
    encode_tensor_maps(plan, state.device, &args.params, sizeof(args.params));
    plan.config.programmatic_dependent_launch = options.pdl;
    args.params.programmatic_launch = options.pdl ? 1 : 0;
    state.device.launch(*kernel, plan.config, options.stream, &args.params, sizeof(args.params));
}

void PagedDispatcher::run_reference(PagedMqaLogitsArgs& args, void* stream) {
    DeviceState& state = state_for(*backend_.current_device());
    const std::shared_ptr<LoadedKernel> kernel =
        load_prebuilt(cache_, state.device, state.arch, backend_, backend_.paged_reference(state.arch));
    state.device.launch(*kernel, paged_reference_launch_config(args.shape), stream, &args.params, sizeof(args.params));
}

KernelChoice PagedDispatcher::choose(const PagedProblemShape& shape, bool clean_logits, const std::string& requested) {
    return decide(state_for(*backend_.current_device()), shape, clean_logits, requested);
}

KernelChoice PagedDispatcher::decide(DeviceState& state, const PagedProblemShape& shape, bool clean_logits,
                                     const std::string& requested) {
    if (requested == "baseline") return {std::nullopt, "baseline requested"};
    if (!requested.empty()) {
        const Variant variant = Variant::parse(requested);
        const Support support = fits(state.arch, shape, variant);
        MQAJIT_CHECK_KIND(unsupported, support.ok, "variant {} cannot run this paged_mqa_logits call on this {} ({}): {}",
                          requested, state.device.name(), state.arch.name, support.reason);
        return {variant, "variant requested by the caller"};
    }
    if (settings().disable_jit) return {std::nullopt, "MQAJIT_DISABLE_JIT is set"};
    const PagedShapeKey key = tuning_key(state.arch, state.limits.multiprocessors, shape, clean_logits);
    const PagedTunedRow* row = TuningDb::instance().lookup(key);
    if (row == nullptr) {
        return {std::nullopt, "no tuned paged_mqa_logits row for this arch, SM count, next_n, heads, head_dim and block_kv"};
    }
    if (row->backend != "jit") return {std::nullopt, fmt::format("tuned row {} picks the baseline", row->origin)};
    std::string unparsable;
    const std::optional<Variant> parsed = parse_tuned_variant(row->origin, row->variant, &unparsable);
    if (!parsed) return {std::nullopt, std::move(unparsable)};
    const Variant& variant = *parsed;
    const Support support = fits(state.arch, shape, variant);
    if (!support.ok) return {std::nullopt, fmt::format("tuned variant {} cannot run here: {}", row->variant, support.reason)};
    return {variant, tuned_row_reason(*row, key)};
}

std::pair<const PagedDispatcher::Resolved*, std::shared_ptr<LoadedKernel>> PagedDispatcher::resolve(
    DeviceState& state, const PagedProblemShape& shape, bool clean_logits, const std::string& requested) {
    // NOTES: as for prefill, the warm path is one tuning lookup, one hash lookup and the kernel
    // taken from its weak reference; a decision is made once per tuned row or explicit request.
    const PagedTunedRow* row = nullptr;
    if (requested.empty() && !settings().disable_jit)
        row = TuningDb::instance().lookup(tuning_key(state.arch, state.limits.multiprocessors, shape, clean_logits));
    if (log().should_log(spdlog::level::debug)) log_first_decision(state, shape, clean_logits, requested);
    return state.decisions.resolve(
        row, clean_logits, call_shape(shape), requested,
        [&](const Resolved& decided) { return load(state, decided, shape); },
        [&] { return make_decision(state, shape, clean_logits, requested); },
        [&](const Resolved& decided, const Error& e) {
            log().warn("variant {} could not be loaded again on {}, using the paged baseline kernel instead: {}",
                       decided.variant->name(), state.arch.name, e.what());
            return resolve(state, shape, clean_logits, "baseline");
        });
}

void PagedDispatcher::log_first_decision(DeviceState& state, const PagedProblemShape& shape, bool clean_logits,
                                         const std::string& requested) {
    {
        std::lock_guard lock(state.mutex);
        if (!state.logged_shapes.emplace(call_shape(shape), shape.batch, clean_logits).second) return;
    }
    const KernelChoice choice = decide(state, shape, clean_logits, requested);
    log().debug("paged dispatch {} h{} d{} next_n{} block_kv{} batch{} clean_logits={}: {} ({})", state.arch.name,
                shape.heads, shape.head_dim, shape.next_n, shape.block_kv, shape.batch, clean_logits ? 1 : 0,
                choice.variant ? choice.variant->name() : "baseline", choice.reason);
}

std::pair<PagedDispatcher::Resolved, std::shared_ptr<LoadedKernel>> PagedDispatcher::make_decision(
    DeviceState& state, const PagedProblemShape& shape, bool clean_logits, const std::string& requested) {
    const KernelChoice choice = decide(state, shape, clean_logits, requested);
    Resolved resolved;
    resolved.variant = choice.variant;
    resolved.reason = choice.reason;
    std::shared_ptr<LoadedKernel> kernel;
    if (resolved.variant) {
        try {
            resolved.launched = *resolved.variant;
            kernel = load(state, resolved, shape);
        } catch (const Error& e) {
            if (!requested.empty()) throw;
            if (first_time(state.arch.target_id() + "|paged|" + e.what())) {
                log().warn("variant {} is unavailable on {}, using the paged baseline kernel instead: {}",
                           resolved.variant->name(), state.arch.name, e.what());
            }
            std::string reason = fmt::format("{} failed to build: {}", resolved.variant->name(), e.what());
            resolved = Resolved{};
            resolved.reason = std::move(reason);
        }
    }
    if (!kernel) {
        resolved.baseline = backend_.paged_baseline(state.arch, shape);
        resolved.launched = resolved.baseline->variant;
        kernel = load(state, resolved, shape);
    }
    return {std::move(resolved), std::move(kernel)};
}

std::shared_ptr<LoadedKernel> PagedDispatcher::load(DeviceState& state, const Resolved& resolved,
                                                    const PagedProblemShape& shape) {
    if (resolved.baseline) return load_prebuilt(cache_, state.device, state.arch, backend_, resolved.baseline->kernel);
    return backend_.generated_kernel(cache_, state.device, resolved.launched, shape.heads, shape.head_dim);
}

}  // namespace mqajit
