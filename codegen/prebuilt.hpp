#pragma once
// Kernels compiled by nvcc at build time and linked into the library as one fatbin: the baseline
// (the sm80 family's baseline variant for each supported heads/head_dim, and on sm_90a a wgmma
// one) and the reference kernel. Built only with MQAJIT_WITH_CUDA (codegen/prebuilt/).

#include <span>

#include "codegen/baseline.hpp"
#include "variants/arch.hpp"

namespace mqajit {

// The fatbin bytes (cubins for MQAJIT_CUDA_ARCHS plus PTX for the newest), loadable with cuModuleLoadData.
std::span<const char> prebuilt_fatbin();

// The pre-built kernel that serves as the baseline on `arch`: the wgmma variant
// wgmma64x128x32_bkv64_r{128/H}_w4_lds4 on sm_90a when the fatbin holds sm_90a code, else the mma
// baseline (baseline_variant(heads)). Throws Error(unsupported) for heads/head_dim it lacks.
PrebuiltBaseline prebuilt_baseline(const Arch& arch, int heads, int head_dim);
// Whether the fatbin holds the sm_90a kernels (MQAJIT_CUDA_ARCHS had 90).
bool prebuilt_has_sm90a();

// The paged_mqa_logits fatbin: the reference kernel (kPagedReferenceKernelName) for every arch
// and, on sm_90a, the baselines.
std::span<const char> prebuilt_paged_fatbin();
// The paged baseline for a call: paged_baseline_variant(heads, next_n), 64-token blocks, on sm_90a.
// Throws Error(unsupported) saying why there is none (another arch, another block size, a build
// without sm_90a, heads/head_dim/next_n it lacks).
PrebuiltBaseline prebuilt_paged_baseline(const Arch& arch, const PagedProblemShape& shape);

// The mqa_topk fatbin: its select kernel (kTopkSelectKernelName), for every arch.
std::span<const char> prebuilt_topk_fatbin();

}  // namespace mqajit
