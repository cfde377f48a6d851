#pragma once
// The decisions a dispatcher has made, each holding a weak reference to its loaded kernel: by
// tuned row (and the call's mode, since a row of one mode may serve another) or, for
// explicit requests and calls no row matched, by the call's identity and then the requested name
// (found without building a key). A warm call is one hash lookup and taking the kernel from its
// weak reference; a kernel the kernel cache has since evicted is loaded again for the same decision.
// Decision needs `std::optional<Variant> variant`, `std::weak_ptr<LoadedKernel> kernel` and `bool made`.

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "mqajit/error.hpp"
#include "runtime/device.hpp"

namespace mqajit {

template <class Row, class Identity, class Decision>
class DecisionMemo {
public:
    using Resolved = std::pair<const Decision*, std::shared_ptr<LoadedKernel>>;

    // Distinct call modes a row may serve: clean_logits (1) plus 2 for bf16 logits (prefill).
    static constexpr int kCallModes = 4;

    // The decision for a call and its kernel, loaded. `row` is the tuned row that matched (null:
    // none, or a request), `call_mode` the call's mode, below kCallModes; `load(decision)` loads a decision's kernel; `make()` decides anew and
    // returns {decision, its loaded kernel}; `fall_back(decision, error)` answers when a tuned
    // variant's kernel cannot be loaded again (a request's failure is thrown to the caller).
    template <class Load, class Make, class FallBack>
    Resolved resolve(const Row* row, int call_mode, const Identity& identity, const std::string& requested,
                     Load&& load, Make&& make, FallBack&& fall_back) {
        Decision* decided = nullptr;
        {
            std::lock_guard lock(mutex_);
            decided = find(row, call_mode, identity, requested);
            if (decided) {
                if (std::shared_ptr<LoadedKernel> kernel = decided->kernel.lock()) return {decided, std::move(kernel)};
            }
        }
        if (decided) {
            try {
                std::shared_ptr<LoadedKernel> kernel = load(*decided);
                std::lock_guard lock(mutex_);
                decided->kernel = kernel;
                return {decided, std::move(kernel)};
            } catch (const Error& e) {
                if (!requested.empty() || !decided->variant) throw;
                return fall_back(*decided, e);
            }
        }
        auto [made, kernel] = make();
        made.made = true;
        made.kernel = kernel;
        std::lock_guard lock(mutex_);
        Decision& slot = row ? by_row_.at(static_cast<std::size_t>(call_mode))[row] : by_request_[identity][requested];
        // NOTES: a racing thread's equal decision stays; this call runs the kernel it loaded.
        if (!slot.made) slot = std::move(made);
        else if (slot.kernel.expired()) slot.kernel = kernel;
        return {&slot, std::move(kernel)};
    }

private:
    Decision* find(const Row* row, int call_mode, const Identity& identity, const std::string& requested) {
        if (row) {
            auto& rows = by_row_.at(static_cast<std::size_t>(call_mode));
            const auto found = rows.find(row);
            return found == rows.end() ? nullptr : &found->second;
        }
        const auto group = by_request_.find(identity);
        if (group == by_request_.end()) return nullptr;
        const auto found = group->second.find(requested);
        return found == group->second.end() ? nullptr : &found->second;
    }

    std::mutex mutex_;
    std::array<std::unordered_map<const Row*, Decision>, kCallModes> by_row_;
    std::map<Identity, std::unordered_map<std::string, Decision>> by_request_;
};

}  // namespace mqajit
