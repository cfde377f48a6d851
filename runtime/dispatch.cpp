#include "runtime/dispatch.hpp"

#include <fmt/format.h>

#include "codegen/families.hpp"
#include "codegen/prebuilt.hpp"
#include "core/check.hpp"
#include "core/hash.hpp"
#include "core/log.hpp"
#include "core/settings.hpp"
#include "tuning_db/tuning_db.hpp"
#include "variants/registry.hpp"

namespace mqajit {

struct Dispatcher::DeviceKernels {
    std::mutex mutex;
    std::unordered_map<std::string, std::shared_ptr<LoadedKernel>> by_name;
};

namespace {

std::optional<DiskCache> make_disk_cache() {
    if (settings().disable_disk_cache) return std::nullopt;
    return DiskCache(settings().cache_dir / "kernels");
}

std::string shape_tag(const Device& device, const ProblemShape& s) {
    return fmt::format("{}/{}sm h{} d{} s{} n{}", device.arch(), device.multiprocessor_count(), s.heads, s.head_dim,
                       s.seq_len, s.seq_len_kv);
}

}  // namespace

Dispatcher& Dispatcher::instance() {
    static Dispatcher dispatcher;
    return dispatcher;
}

Dispatcher::Dispatcher()
    : backend_(backend_for(Vendor::nvidia)),
      cache_(make_disk_cache(), static_cast<std::size_t>(settings().memory_cache_capacity)) {}

void Dispatcher::run(MqaLogitsArgs& args, const MqaLogitsOptions& options) {
    Device& device = *backend_.current_device();
    const KernelChoice choice = decide(device, args.shape, options.variant);
    if (options.report) *options.report = {choice.variant ? choice.variant->name() : "baseline", choice.reason};
    if (choice.variant) {
        const bool explicitly_requested = !options.variant.empty();
        try {
            launch_variant(device, *choice.variant, args, options.stream);
            return;
        } catch (const Error& e) {
            if (explicitly_requested) throw;
            report_jit_failure(*choice.variant, e.what());
            if (options.report) {
                *options.report = {"baseline", fmt::format("{} failed: {}", choice.variant->name(), e.what())};
            }
        }
    }
    launch_baseline(device, args, options.stream);
}

KernelChoice Dispatcher::choose(const ProblemShape& shape, const std::string& requested_variant) {
    return decide(*backend_.current_device(), shape, requested_variant);
}

KernelChoice Dispatcher::decide(Device& device, const ProblemShape& shape, const std::string& requested) {
    const std::string key = fmt::format("{}#{}|{}", device.ordinal(), shape_tag(device, shape), requested);
    {
        std::lock_guard lock(mutex_);
        if (auto found = choices_.find(key); found != choices_.end()) return found->second;
    }
    const Arch arch = Arch::parse(device.arch());
    KernelChoice choice;
    if (requested == "baseline") {
        choice.reason = "baseline requested";
    } else if (!requested.empty()) {
        const Variant variant = Variant::parse(requested);
        const Support support = VariantRegistry::instance().supports(arch, shape.heads, shape.head_dim, variant);
        MQAJIT_CHECK_KIND(unsupported, support.ok, "variant {} cannot run here: {}", requested, support.reason);
        choice = {variant, "variant requested by the caller"};
    } else if (settings().disable_jit) {
        choice.reason = "MQAJIT_DISABLE_JIT is set";
    } else {
        const ShapeKey shape_key{.arch = arch.name, .cu_num = device.multiprocessor_count(), .heads = shape.heads,
                                 .head_dim = shape.head_dim, .seq_len = shape.seq_len, .seq_len_kv = shape.seq_len_kv};
        const TunedRow* row = TuningDb::instance().lookup(shape_key);
        if (row == nullptr) {
            choice.reason = "no tuned row for this arch, SM count, heads and head_dim";
        } else if (row->backend != "jit") {
            choice.reason = fmt::format("tuned row ({}) picks the baseline", row->origin);
        } else {
            const Variant variant = Variant::parse(row->variant);
            const Support support = VariantRegistry::instance().supports(arch, shape.heads, shape.head_dim, variant);
            if (support.ok) {
                choice = {variant, fmt::format("tuned row {} (s{} n{})", row->origin, row->key.seq_len,
                                               row->key.seq_len_kv)};
            } else {
                choice.reason = fmt::format("tuned variant {} cannot run here: {}", row->variant, support.reason);
            }
        }
    }
    std::lock_guard lock(mutex_);
    if (choice.variant && failed_variants_.contains(choice.variant->name())) {
        choice = {std::nullopt, fmt::format("{} failed to build earlier", choice.variant->name())};
    }
    auto [it, inserted] = choices_.emplace(key, choice);
    if (inserted) {
        log().debug("dispatch {}: {} ({})", shape_tag(device, shape), choice.variant ? choice.variant->name() : "baseline",
                    choice.reason);
    }
    return it->second;
}

void Dispatcher::report_jit_failure(const Variant& variant, const std::string& what) {
    std::lock_guard lock(mutex_);
    if (failed_variants_.insert(variant.name()).second) {
        log().warn("variant {} is unavailable, using the baseline kernel instead: {}", variant.name(), what);
    }
    std::erase_if(choices_, [&](const auto& entry) {
        return entry.second.variant && entry.second.variant->name() == variant.name();
    });
}

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

std::shared_ptr<LoadedKernel> Dispatcher::jit_kernel(Device& device, const Variant& variant, const ProblemShape& shape) {
    const Compiler& compiler = backend_.compiler();
    const Arch arch = Arch::parse(device.arch());
    return cache_.get(device, compiler, kernel_key_for(variant, shape.heads, shape.head_dim, arch, compiler),
                      [&] { return compile_request_for(variant, shape.heads, shape.head_dim, arch); });
}

void Dispatcher::launch_variant(Device& device, const Variant& variant, MqaLogitsArgs& args, void* stream) {
    std::shared_ptr<LoadedKernel> kernel = jit_kernel(device, variant, args.shape);
    const LaunchPlan plan = family_for(variant).plan(variant, args.shape, device, args.params);
    device.launch(*kernel, plan.config, stream, &args.params, sizeof(args.params));
}

Dispatcher::DeviceKernels& Dispatcher::prebuilt_kernels(Device& device) {
    std::lock_guard lock(mutex_);
    auto& slot = prebuilt_[device.ordinal()];
    if (!slot) slot = std::make_unique<DeviceKernels>();
    return *slot;
}

namespace {

std::shared_ptr<LoadedKernel> prebuilt_kernel(Device& device, std::mutex& mutex,
                                              std::unordered_map<std::string, std::shared_ptr<LoadedKernel>>& kernels,
                                              const std::string& name) {
    std::lock_guard lock(mutex);
    auto& slot = kernels[name];
    if (!slot) slot = device.load(prebuilt_fatbin(), name);
    return slot;
}

}  // namespace

void Dispatcher::launch_baseline(Device& device, MqaLogitsArgs& args, void* stream) {
    DeviceKernels& kernels = prebuilt_kernels(device);
    auto kernel = prebuilt_kernel(device, kernels.mutex, kernels.by_name,
                                  baseline_kernel_name(args.shape.heads, args.shape.head_dim));
    const Variant variant = baseline_variant(args.shape.heads);
    const LaunchPlan plan = family_for(variant).plan(variant, args.shape, device, args.params);
    device.launch(*kernel, plan.config, stream, &args.params, sizeof(args.params));
}

void Dispatcher::run_reference(MqaLogitsArgs& args, void* stream) {
    Device& device = *backend_.current_device();
    DeviceKernels& kernels = prebuilt_kernels(device);
    auto kernel = prebuilt_kernel(device, kernels.mutex, kernels.by_name, kReferenceKernelName);
    LaunchConfig config;
    config.grid_x = static_cast<unsigned>((args.shape.seq_len_kv + 127) / 128);
    config.grid_y = static_cast<unsigned>(args.shape.seq_len);
    config.block_x = 128;
    device.launch(*kernel, config, stream, &args.params, sizeof(args.params));
}

}  // namespace mqajit
