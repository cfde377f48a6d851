#pragma once
// The straight line of one paged_mqa_logits() (decode) call, as dispatch.hpp's is for prefill:
// live device -> decode tuning-table lookup -> variant -> fits the call -> cached kernel (the
// backend generates, compiles and loads it on a miss) -> the family's launch plan -> launch. JIT
// failures are caught here: logged once, then the backend's pre-built paged baseline serves.

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

#include "codegen/kernel_family.hpp"
#include "mqajit/paged_mqa_logits.hpp"
#include "runtime/backend.hpp"
#include "runtime/dispatch.hpp"  // KernelChoice
#include "runtime/kernel_cache.hpp"
#include "runtime/paged_mqa_logits_args.hpp"
#include "tuning_db/tuned_row.hpp"

namespace mqajit {

class PagedDispatcher {
public:
    // The call's identity columns: what a decision (the baseline's kernel included) depends on
    // besides the tuned row or the request.
    using CallShape = std::tuple<int, int, int, int>;  // heads, head_dim, next_n, block_kv

    static PagedDispatcher& instance();

    void run(PagedMqaLogitsArgs& args, const PagedMqaLogitsOptions& options);
    void run_reference(PagedMqaLogitsArgs& args, void* stream);
    // The decision for a call of a shape in a mode on the current device, without compiling or launching.
    KernelChoice choose(const PagedProblemShape& shape, bool clean_logits, const std::string& requested_variant);

private:
    PagedDispatcher(Backend& backend, KernelCache& cache);

    struct Resolved {
        std::optional<Variant> variant;  // the choice; nullopt: the baseline
        std::string reason;
        Variant launched;  // whose plan applies: the choice, or the baseline's variant
        std::optional<BaselineKernel> baseline;
        std::weak_ptr<LoadedKernel> kernel;
        bool made = false;  // set once the decision is stored
    };
    struct DeviceState;

    DeviceState& state_for(Device& device);
    KernelChoice decide(DeviceState& state, const PagedProblemShape& shape, bool clean_logits,
                        const std::string& requested);
    std::pair<const Resolved*, std::shared_ptr<LoadedKernel>> resolve(DeviceState& state,
                                                                      const PagedProblemShape& shape,
                                                                      bool clean_logits, const std::string& requested);
    std::pair<Resolved, std::shared_ptr<LoadedKernel>> make_decision(DeviceState& state, const PagedProblemShape& shape,
                                                                     bool clean_logits, const std::string& requested);
    void log_first_decision(DeviceState& state, const PagedProblemShape& shape, bool clean_logits,
                            const std::string& requested);
    std::shared_ptr<LoadedKernel> load(DeviceState& state, const Resolved& resolved, const PagedProblemShape& shape);

    Backend& backend_;
    KernelCache& cache_;
    std::mutex mutex_;
    std::unordered_map<int, std::unique_ptr<DeviceState>> devices_;
};

}  // namespace mqajit
