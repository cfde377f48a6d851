#pragma once
// MQAJIT_ARCH at run time. It names the target of `mqajit aot`, `codegen`, `variants` and
// `db lookup`; at run time the live device's arch always wins: tuned rows are looked up with it and
// kernels are built for it, and a kernel built for another arch is refused before it can run
// (dispatch then serves the baseline, with one warning).

#include <optional>
#include <string>
#include <string_view>

#include "variants/arch.hpp"

namespace mqajit {

// Whether code built for `built_for` runs on a device whose arch is `live`: the same processor
// (vendor, number, sm_XXa's "a"), and every feature flag the code fixes ("xnack-") set the same way
// on the device. Flags the code leaves out mean "any".
bool code_runs_on(const Arch& built_for, const Arch& live);

// Throws Error(unsupported) unless code_runs_on(built_for, live), naming `what` and both archs.
void check_code_runs_on(const Arch& built_for, const Arch& live, std::string_view what);

// When MQAJIT_ARCH (`override_text`) names an arch the live device does not run, logs one warning
// per process and (override, live) pair saying that the live arch is used; returns whether it
// warned now. A malformed MQAJIT_ARCH is warned about the same way, never thrown.
bool warn_if_arch_override_differs(const std::optional<std::string>& override_text, const Arch& live);

}  // namespace mqajit
