#pragma once
// The straight line of one mqa_logits() call: live device -> tuning-table lookup -> variant ->
// registry check -> cached kernel (the backend generates, compiles and loads it on a miss) ->
// the family's launch plan -> launch. JIT failures are caught here and only here: logged once,
// then the backend's pre-built baseline serves. No vendor is named: the backend answers.

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "codegen/kernel_family.hpp"
#include "mqajit/mqa_logits.hpp"
#include "runtime/backend.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/kernel_choice.hpp"
#include "runtime/mqa_logits_args.hpp"
#include "variants/variant.hpp"

namespace mqajit {


class Dispatcher {
public:
    static Dispatcher& instance();

    void run(MqaLogitsArgs& args, const MqaLogitsOptions& options);
    // The backend's reference kernel (fp32, e4m3 decoded in software), for tests, the demo and the tuner.
    void run_reference(MqaLogitsArgs& args, void* stream);
    // mqa_topk's fused kernel: `topk_variant` (an mqa_topk family's) over args, whose topk_* fields
    // are set; compiled and cached like a tuned variant. Errors propagate (the caller falls back).
    void run_topk_variant(const Variant& topk_variant, MqaLogitsArgs& args, void* stream, bool pdl);
    // Compiles (or finds) and loads that kernel ahead of the call's first launch.
    void prepare_topk_variant(const Variant& topk_variant, int heads, int head_dim);
    // mqa_topk's pre-built kernel `kernel_name` for the current device, loaded (kept in the kernel
    // cache), and that device; the device's arch is the one parsed once for it.
    std::pair<std::shared_ptr<LoadedKernel>, Device*> topk_kernel(const char* kernel_name);
    // The decision for a call of a shape in a mode on the current device, without compiling or launching.
    KernelChoice choose(const ProblemShape& shape, bool clean_logits, const std::string& requested_variant);
    // The backend dispatch runs on (the live one).
    Backend& backend() const { return backend_; }
    // Loaded kernels of every operator (the decode dispatcher shares it).
    KernelCache& kernel_cache() { return cache_; }

private:
    Dispatcher();

    // A decision: what a warm call needs, found with one hash lookup. The kernel itself stays in
    // the kernel cache (whose capacity bounds what is loaded); a weak reference finds it there
    // without a key, and an evicted one is loaded again.
    struct Resolved {
        std::optional<Variant> variant;  // the choice; nullopt: the baseline
        std::string reason;
        Variant launched;                       // whose launch plan applies: the choice, or the baseline's variant
        const MqaLogitsFamily* family = nullptr;  // launched's family
        std::optional<BaselineKernel> baseline;   // set when the baseline runs
        std::weak_ptr<LoadedKernel> kernel;
        bool made = false;  // set once the decision is stored
    };
    struct DeviceState;

    DeviceState& state_for(Device& device);
    KernelChoice decide(DeviceState& state, const ProblemShape& shape, bool clean_logits, const std::string& requested);
    // The decision for a call of a shape in a mode, and its kernel, loaded.
    std::pair<const Resolved*, std::shared_ptr<LoadedKernel>> resolve(DeviceState& state, const ProblemShape& shape,
                                                                      bool clean_logits, const std::string& requested);
    std::pair<Resolved, std::shared_ptr<LoadedKernel>> make_decision(DeviceState& state, const ProblemShape& shape,
                                                                     bool clean_logits, const std::string& requested);
    void log_first_decision(DeviceState& state, const ProblemShape& shape, bool clean_logits,
                            const std::string& requested);
    std::shared_ptr<LoadedKernel> load(DeviceState& state, const Resolved& resolved, const ProblemShape& shape);
    std::shared_ptr<LoadedKernel> prebuilt_kernel(DeviceState& state, const PrebuiltKernel& kernel);
    void launch(DeviceState& state, const Resolved& resolved, LoadedKernel& kernel, MqaLogitsArgs& args, void* stream,
                bool pdl);

    Backend& backend_;
    KernelCache cache_;
    std::mutex mutex_;
    std::unordered_map<int, std::unique_ptr<DeviceState>> devices_;
};

}  // namespace mqajit
