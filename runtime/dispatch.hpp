#pragma once
// The straight line of one mqa_logits() call: live device -> tuning-table lookup -> variant ->
// registry check -> cached kernel (generate, compile, load on a miss) -> launch. JIT failures are
// caught here and only here: logged once, then the pre-built baseline serves.

#include <memory>
#include <mutex>
#include <optional>
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
    // The decision for a call of a shape in a mode on the current device, without compiling or launching.
    KernelChoice choose(const ProblemShape& shape, bool clean_logits, const std::string& requested_variant);

private:
    Dispatcher();

    // A decision with its kernel loaded: what a warm call needs, found with one hash lookup.
    struct Resolved {
        std::optional<Variant> variant;  // the choice; nullopt: the baseline
        std::string reason;
        Variant launched;                      // whose launch plan applies: the choice, or the baseline's variant
        std::shared_ptr<LoadedKernel> kernel;  // what runs: the JIT kernel or the pre-built baseline
    };
    struct DeviceState;

    DeviceState& state_for(Device& device);
    KernelChoice decide(DeviceState& state, const ProblemShape& shape, bool clean_logits, const std::string& requested);
    const Resolved& resolve(DeviceState& state, const ProblemShape& shape, bool clean_logits,
                            const std::string& requested);
    std::shared_ptr<LoadedKernel> jit_kernel(DeviceState& state, const Variant& variant, const ProblemShape& shape);
    std::shared_ptr<LoadedKernel> prebuilt_kernel(DeviceState& state, const std::string& name);
    void launch(Device& device, const Variant& variant, LoadedKernel& kernel, MqaLogitsArgs& args, void* stream);

    Backend& backend_;
    KernelCache cache_;
    std::mutex mutex_;
    std::unordered_map<int, std::unique_ptr<DeviceState>> devices_;
};

}  // namespace mqajit
