#pragma once
// The AMD baseline and reference kernels: code objects for gfx942 and gfx950 compiled by clang-22
// at build time and linked into the library (codegen/prebuilt_amd/), absent from builds made
// without clang-22: the mqa_logits and paged_mqa_logits baselines and reference kernels.

#include <span>
#include <string>
#include <vector>

#include "codegen/baseline.hpp"
#include "variants/arch.hpp"

namespace mqajit {

// The archs this build has baseline code objects for: {"gfx942", "gfx950"}, or none.
std::vector<std::string> prebuilt_amd_archs();

// The code object for `arch` (its processor; feature flags are ignored: the object is built for
// "any"), or an empty span when this build has none.
std::span<const char> prebuilt_amd_code_object(const Arch& arch);

// prebuilt_amd_code_object(arch), or Error(unsupported) saying why this build has none for `arch`
// (no clang-22 at build time, or an arch other than gfx942/gfx950). It holds the reference kernel
// (kReferenceKernelName) and the baseline.
std::span<const char> prebuilt_amd_code_object_for(const Arch& arch);

// The baseline on an AMD arch: gfx9_baseline.hpp's mfma variant under baseline_kernel_name(H, D), in
// prebuilt_amd_code_object(arch). Throws Error(unsupported) saying why when the build has none for
// `arch` (no clang-22 at build time, or an arch other than gfx942/gfx950) or for heads/head_dim.
PrebuiltBaseline prebuilt_amd_baseline(const Arch& arch, int heads, int head_dim);

// The paged_mqa_logits baseline on an AMD arch: gfx9_baseline.hpp's pmfma variant for the call's
// next_n under paged_baseline_kernel_name(shape), in prebuilt_amd_code_object(arch), which also holds
// the paged reference kernel (kPagedReferenceKernelName). Throws Error(unsupported) saying why when
// the build has none for `arch` or the shape (64-token cache blocks only).
PrebuiltBaseline prebuilt_amd_paged_baseline(const Arch& arch, const PagedProblemShape& shape);

}  // namespace mqajit
