#include "runtime/dispatch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <tuple>

#include "codegen/families.hpp"
#include "codegen/prebuilt.hpp"
#include "codegen/prebuilt_amd.hpp"
#include "core/check.hpp"
#include "core/log.hpp"
#include "core/settings.hpp"
#include "runtime/arch_override.hpp"
#include "runtime/hip_kernel_source.hpp"
#include "tuning_db/tuning_db.hpp"
#include "variants/registry.hpp"

namespace mqajit {

struct Dispatcher::DeviceState {
    explicit DeviceState(Device& d) : device(d), arch(Arch::parse(d.arch())), multiprocessors(d.multiprocessor_count()) {}

    Device& device;
    const Arch arch;
    const int multiprocessors;
    std::mutex mutex;
    // Decisions of tuned rows, by the call's clean_logits: a row of one mode may serve the other
    // (when that has no rows), and the reason then says so.
    std::array<std::unordered_map<const TunedRow*, Resolved>, 2> by_row;
    // Explicit requests ("" when no row matched) by (heads, head_dim), then by the requested name.
    std::map<std::pair<int, int>, std::unordered_map<std::string, Resolved>> by_request;
    std::unordered_map<std::string, std::shared_ptr<LoadedKernel>> prebuilt;  // by kernel name
    std::set<std::tuple<int, int, std::int64_t, std::int64_t, bool>> logged_shapes;
};

namespace {

std::optional<DiskCache> make_disk_cache() {
    if (settings().disable_disk_cache) return std::nullopt;
    return DiskCache(settings().cache_dir / "kernels");
}

// NOTES: an AMD device runs the clang-built mfma baseline; every other arch the nvcc fatbin's.
PrebuiltBaseline baseline_for(const Arch& arch, int heads, int head_dim) {
    if (arch.vendor == Vendor::amd) return prebuilt_amd_baseline(arch, heads, head_dim);
    return prebuilt_baseline(arch, heads, head_dim);
}

std::span<const char> prebuilt_binary_for(const Arch& arch) {
    return arch.vendor == Vendor::amd ? prebuilt_amd_code_object(arch) : prebuilt_fatbin();
}

// True the first time `topic` is seen in this process: one failure that hits every variant (hiprtc
// missing, a kernel built for another arch) is one warning, not one per tuned row.
bool first_time(const std::string& topic) {
    static std::mutex mutex;
    static std::set<std::string> seen;
    const std::lock_guard lock(mutex);
    return seen.insert(topic).second;
}

}  // namespace

KernelKey kernel_key_for(const Variant& variant, int heads, int head_dim, const Arch& arch, const Compiler& compiler) {
    return KernelKey{.family = family_for(variant).name(),
                     .variant = fmt::format("{}_h{}_d{}", variant.name(), heads, head_dim),
                     .arch = arch.name,
                     .options_fingerprint = fmt::format("{}-{}", compiler.name(), compiler.version())};
}

CompileRequest compile_request_for(const Variant& variant, int heads, int head_dim, const Arch& arch) {
    GeneratedKernel generated = family_for(variant).generate(variant, heads, head_dim, arch);
    CompileRequest request;
    request.source = std::move(generated.source);
    request.source_name = fmt::format("{}_h{}_d{}.cu", variant.name(), heads, head_dim);
    request.kernel_name = std::move(generated.kernel_name);
    request.arch = arch.name;
    request.options = std::move(generated.options);
    request.headers = generated.headers;
    return request;
}

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
    const Resolved& resolved = resolve(state, args.shape, options.clean_logits, options.variant);
    if (options.report) *options.report = {resolved.variant ? resolved.variant->name() : "baseline", resolved.reason};
    launch(state.device, resolved.launched, *resolved.kernel, args, options.stream);
}

KernelChoice Dispatcher::choose(const ProblemShape& shape, bool clean_logits, const std::string& requested_variant) {
    return decide(state_for(*backend_.current_device()), shape, clean_logits, requested_variant);
}

namespace {

ShapeKey tuning_key(const Arch& arch, int multiprocessors, const ProblemShape& shape, bool clean_logits) {
    return ShapeKey{.arch = arch.name, .cu_num = multiprocessors, .heads = shape.heads, .head_dim = shape.head_dim,
                    .clean_logits = clean_logits ? 1 : 0, .seq_len = shape.seq_len, .seq_len_kv = shape.seq_len_kv};
}

// "tuned row X (seq_len 1024, seq_len_kv 8192)", with what differs from the call's own group.
std::string tuned_row_reason(const TunedRow& row, const ShapeKey& call) {
    std::string text = fmt::format("tuned row {} (seq_len {}, seq_len_kv {}", row.origin, row.key.seq_len,
                                   row.key.seq_len_kv);
    if (row.key.cu_num != call.cu_num) text += fmt::format("; tuned at the nearest SM count, {}", row.key.cu_num);
    if (row.key.clean_logits != call.clean_logits)
        text += fmt::format("; tuned with clean_logits={}, none with {}", row.key.clean_logits, call.clean_logits);
    return text + ")";
}

}  // namespace

KernelChoice Dispatcher::decide(DeviceState& state, const ProblemShape& shape, bool clean_logits,
                                const std::string& requested) {
    if (requested == "baseline") return {std::nullopt, "baseline requested"};
    const auto& registry = VariantRegistry::instance();
    if (!requested.empty()) {
        const Variant variant = Variant::parse(requested);
        const Support support = registry.supports(state.arch, shape.heads, shape.head_dim, variant);
        MQAJIT_CHECK_KIND(unsupported, support.ok, "variant {} cannot run on this {} ({}): {}", requested,
                          state.device.name(), state.arch.name, support.reason);
        return {variant, "variant requested by the caller"};
    }
    if (settings().disable_jit) return {std::nullopt, "MQAJIT_DISABLE_JIT is set"};
    const ShapeKey key = tuning_key(state.arch, state.multiprocessors, shape, clean_logits);
    const TunedRow* row = TuningDb::instance().lookup(key);
    if (row == nullptr) return {std::nullopt, "no tuned row for this arch, SM count, heads and head_dim"};
    if (row->backend != "jit") return {std::nullopt, fmt::format("tuned row {} picks the baseline", row->origin)};
    const Variant variant = Variant::parse(row->variant);
    const Support support = registry.supports(state.arch, shape.heads, shape.head_dim, variant);
    if (!support.ok) return {std::nullopt, fmt::format("tuned variant {} cannot run here: {}", row->variant, support.reason)};
    return {variant, tuned_row_reason(*row, key)};
}

const Dispatcher::Resolved& Dispatcher::resolve(DeviceState& state, const ProblemShape& shape, bool clean_logits,
                                                const std::string& requested) {
    // NOTES: the warm path is one tuning lookup (two binary searches) and one hash lookup; the rest
    // runs once per tuned row or explicit request.
    const TunedRow* row = nullptr;
    if (requested.empty() && !settings().disable_jit)
        row = TuningDb::instance().lookup(tuning_key(state.arch, state.multiprocessors, shape, clean_logits));
    // NOTES: no string is built on the warm path: requests are found by (heads, head_dim) and then
    // by the caller's own string.
    const std::pair<int, int> head_shape{shape.heads, shape.head_dim};
    {
        std::lock_guard lock(state.mutex);
        if (log().should_log(spdlog::level::debug) &&
            state.logged_shapes.emplace(shape.heads, shape.head_dim, shape.seq_len, shape.seq_len_kv, clean_logits)
                .second) {
            const KernelChoice choice = decide(state, shape, clean_logits, requested);
            log().debug("dispatch {} h{} d{} s{} n{} clean_logits={}: {} ({})", state.arch.name, shape.heads,
                        shape.head_dim, shape.seq_len, shape.seq_len_kv, clean_logits ? 1 : 0,
                        choice.variant ? choice.variant->name() : "baseline", choice.reason);
        }
        if (row) {
            auto& decided = state.by_row[clean_logits ? 1 : 0];
            if (auto found = decided.find(row); found != decided.end()) return found->second;
        } else if (auto group = state.by_request.find(head_shape); group != state.by_request.end()) {
            if (auto found = group->second.find(requested); found != group->second.end()) return found->second;
        }
    }

    const KernelChoice choice = decide(state, shape, clean_logits, requested);
    Resolved resolved{choice.variant, choice.reason, {}, nullptr};
    if (resolved.variant) {
        try {
            resolved.kernel = jit_kernel(state, *resolved.variant, shape);
            resolved.launched = *resolved.variant;
        } catch (const Error& e) {
            if (!requested.empty()) throw;
            if (first_time(state.arch.target_id() + "|" + e.what())) {
                log().warn("variant {} is unavailable on {}, using the baseline kernel instead: {}",
                           resolved.variant->name(), state.arch.name, e.what());
            } else {
                log().debug("variant {} is unavailable on {} for the reason warned about before; using the baseline",
                            resolved.variant->name(), state.arch.name);
            }
            resolved = {std::nullopt, fmt::format("{} failed to build: {}", resolved.variant->name(), e.what()), {},
                        nullptr};
        }
    }
    if (!resolved.kernel) {
        const PrebuiltBaseline baseline = baseline_for(state.arch, shape.heads, shape.head_dim);
        resolved.kernel = prebuilt_kernel(state, baseline.kernel_name);
        resolved.launched = baseline.variant;
    }
    std::lock_guard lock(state.mutex);
    auto& map_slot = row ? state.by_row[clean_logits ? 1 : 0][row] : state.by_request[head_shape][requested];
    if (!map_slot.kernel) map_slot = std::move(resolved);  // NOTES: a racing thread's equal decision stays
    return map_slot;
}

std::shared_ptr<LoadedKernel> Dispatcher::jit_kernel(DeviceState& state, const Variant& variant,
                                                     const ProblemShape& shape) {
    if (state.arch.vendor == Vendor::amd) {
        return HipKernelSource::instance().get(cache_, state.device, variant, shape.heads, shape.head_dim);
    }
    const Compiler& compiler = backend_.compiler();
    return cache_.get(state.device, compiler, kernel_key_for(variant, shape.heads, shape.head_dim, state.arch, compiler),
                      [&] { return compile_request_for(variant, shape.heads, shape.head_dim, state.arch); });
}

std::shared_ptr<LoadedKernel> Dispatcher::prebuilt_kernel(DeviceState& state, const std::string& name) {
    std::lock_guard lock(state.mutex);
    auto& slot = state.prebuilt[name];
    if (!slot) slot = state.device.load(prebuilt_binary_for(state.arch), name);
    return slot;
}

void Dispatcher::launch(Device& device, const Variant& variant, LoadedKernel& kernel, MqaLogitsArgs& args,
                        void* stream) {
    const LaunchPlan plan = family_for(variant).plan(variant, args.shape, device, args.params);
    device.launch(kernel, plan.config, stream, &args.params, sizeof(args.params));
}

void Dispatcher::run_reference(MqaLogitsArgs& args, void* stream) {
    DeviceState& state = state_for(*backend_.current_device());
    MQAJIT_CHECK_KIND(unsupported, state.arch.vendor == Vendor::nvidia,
                      "the reference kernel is built for NVIDIA GPUs only; {} ({}) has none", state.device.name(),
                      state.arch.target_id());
    auto kernel = prebuilt_kernel(state, kReferenceKernelName);
    LaunchConfig config;
    config.grid_x = static_cast<unsigned>((args.shape.seq_len_kv + 127) / 128);
    // NOTES: gridDim.y stops at 65535; the reference kernel strides over the rows past it.
    config.grid_y = static_cast<unsigned>(std::min<std::int64_t>(args.shape.seq_len, 65535));
    config.block_x = 128;
    state.device.launch(*kernel, config, stream, &args.params, sizeof(args.params));
}

}  // namespace mqajit
