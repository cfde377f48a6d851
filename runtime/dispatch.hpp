#pragma once
// The straight line of one mqa_logits() call: live device -> tuning-table lookup -> variant ->
// registry check -> cached kernel (generate, compile, load on a miss) -> launch. JIT failures are
// caught here and only here: logged once, then the pre-built baseline serves.

#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "mqajit/mqa_logits.hpp"
#include "runtime/backend.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/mqa_logits_args.hpp"
#include "variants/variant.hpp"

namespace mqajit {

// The cache key and the compile request of a generated kernel: shared by dispatch and `mqajit aot`.
KernelKey kernel_key_for(const Variant& variant, int heads, int head_dim, const Arch& arch, const Compiler& compiler);
CompileRequest compile_request_for(const Variant& variant, int heads, int head_dim, const Arch& arch);

// Which kernel serves a shape on a device, and why.
struct KernelChoice {
    std::optional<Variant> variant;  // nullopt: the baseline
    std::string reason;
};

class Dispatcher {
public:
    static Dispatcher& instance();

    void run(MqaLogitsArgs& args, const MqaLogitsOptions& options);
    // The reference kernel (fp32 on CUDA cores), for tests, the demo and the tuner.
    void run_reference(MqaLogitsArgs& args, void* stream);
    // The decision for a shape on the current device, without launching.
    KernelChoice choose(const ProblemShape& shape, const std::string& requested_variant);
    KernelCache& kernel_cache() { return cache_; }

private:
    Dispatcher();

    struct DeviceKernels;  // the prebuilt module's kernels on one device
    DeviceKernels& prebuilt_kernels(Device& device);
    KernelChoice decide(Device& device, const ProblemShape& shape, const std::string& requested_variant);
    std::shared_ptr<LoadedKernel> jit_kernel(Device& device, const Variant& variant, const ProblemShape& shape);
    void launch_baseline(Device& device, MqaLogitsArgs& args, void* stream);
    void launch_variant(Device& device, const Variant& variant, MqaLogitsArgs& args, void* stream);
    void report_jit_failure(const Variant& variant, const std::string& what);

    Backend& backend_;
    KernelCache cache_;
    std::mutex mutex_;
    std::unordered_map<std::string, KernelChoice> choices_;  // by device + shape + request
    std::set<std::string> failed_variants_;
    std::unordered_map<int, std::unique_ptr<DeviceKernels>> prebuilt_;
};

}  // namespace mqajit
