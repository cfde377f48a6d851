#pragma once
// What the operators' dispatchers (dispatch.hpp, paged_dispatch.hpp) share: the tensor maps a
// launch plan asks for, written into the kernel argument, and one warning per cause.

#include <cstddef>
#include <optional>
#include <string>

#include "codegen/launch_plan.hpp"
#include "runtime/backend.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_cache.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace mqajit {

// Encodes each of the plan's tensor maps into the kernel argument (`argument_bytes` long) at the
// offset the plan gives. Throws Error(internal) for a map that would not fit there.
void encode_tensor_maps(const LaunchPlan& plan, const Device& device, void* argument, std::size_t argument_bytes);

// A pre-built kernel of `backend` (a baseline, a reference, a select kernel) loaded on `device`,
// held in `cache` under one key scheme with the generated ones.
std::shared_ptr<LoadedKernel> load_prebuilt(KernelCache& cache, Device& device, const Arch& arch,
                                            const Backend& backend, const PrebuiltKernel& kernel);

// True the first time `topic` is seen in this process: one failure that hits every variant (hiprtc
// missing, a kernel built for another arch) is one warning, not one per tuned row.
bool first_time(const std::string& topic);

// The variant a tuned row names, or nullopt with the reason in `reason` when this build cannot
// parse it (a row edited by hand or written by another version): like any row whose kernel cannot
// run, it means the baseline, with one warning per row.
std::optional<Variant> parse_tuned_variant(const std::string& origin, const std::string& name, std::string* reason);

}  // namespace mqajit
