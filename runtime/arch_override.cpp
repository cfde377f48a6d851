#include "runtime/arch_override.hpp"

#include <algorithm>
#include <mutex>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/log.hpp"

namespace mqajit {
namespace {

std::string_view feature_name(std::string_view feature) { return feature.substr(0, feature.size() - 1); }

}  // namespace

bool code_runs_on(const Arch& built_for, const Arch& live) {
    // NOTES: `name` carries the processor and sm_XXa's "a"; a cubin for sm_80 is not taken for sm_89
    // here, because mqajit always builds for the exact arch it found.
    if (built_for.vendor != live.vendor || built_for.name != live.name) return false;
    return std::ranges::all_of(built_for.features, [&](const std::string& feature) {
        const auto same_name = [&](const std::string& f) { return feature_name(f) == feature_name(feature); };
        const auto on_device = std::ranges::find_if(live.features, same_name);
        // NOTES: a device that does not report the feature at all does not have it, and HIP loads
        // code with either setting there (as it does code built for "any").
        return on_device == live.features.end() || *on_device == feature;
    });
}

void check_code_runs_on(const Arch& built_for, const Arch& live, std::string_view what) {
    MQAJIT_CHECK_KIND(unsupported, code_runs_on(built_for, live),
                      "{} was built for {}, which this {} device cannot run; a kernel built for another arch never "
                      "runs (MQAJIT_ARCH only sets the target of aot, codegen and db lookup)",
                      what, built_for.target_id(), live.target_id());
}

bool warn_if_arch_override_differs(const std::optional<std::string>& override_text, const Arch& live) {
    if (!override_text) return false;
    std::string problem;
    try {
        const Arch wanted = Arch::parse(*override_text);
        if (code_runs_on(wanted, live)) return false;
        problem = fmt::format("names {}", wanted.target_id());
    } catch (const Error& e) {
        problem = fmt::format("is not an arch ({})", e.what());
    }
    static std::mutex mutex;
    static std::set<std::pair<std::string, std::string>> warned;
    {
        const std::lock_guard lock(mutex);
        if (!warned.emplace(*override_text, live.target_id()).second) return false;
    }
    log().warn("MQAJIT_ARCH={} {}, but the device is {}: at run time tuned rows are looked up and kernels are built "
               "for the device's arch; MQAJIT_ARCH only sets the target of aot, codegen and db lookup",
               *override_text, problem, live.target_id());
    return true;
}

}  // namespace mqajit
