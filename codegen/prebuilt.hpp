#pragma once
// Kernels compiled by nvcc at build time and linked into the library as one fatbin: the baseline
// (the mma family's baseline variant for each supported heads/head_dim) and the reference kernel.

#include <span>
#include <string>

#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace mqajit {

// The fatbin bytes (cubins for MQAJIT_CUDA_ARCHS plus PTX for the newest), loadable with cuModuleLoadData.
std::span<const char> prebuilt_fatbin();

// extern "C" name of the mma baseline kernel for (heads, head_dim), e.g. "mqa_logits_baseline_h32_d128".
std::string baseline_kernel_name(int heads, int head_dim);

// The pre-built kernel that serves as the baseline on `arch`: the wgmma variant
// wgmma64x128x32_bkv64_r{128/H}_w4_lds4 on sm_90a when the fatbin holds sm_90a code, else the mma
// baseline (baseline_variant(heads)). Throws Error(unsupported) for heads/head_dim it lacks.
struct PrebuiltBaseline {
    Variant variant;          // plans the launch (its family's plan())
    std::string kernel_name;  // in prebuilt_fatbin()
};
PrebuiltBaseline prebuilt_baseline(const Arch& arch, int heads, int head_dim);
// Whether the fatbin holds the sm_90a kernels (MQAJIT_CUDA_ARCHS had 90).
bool prebuilt_has_sm90a();

// extern "C" name of the reference kernel (one thread per output element, fp32 on CUDA cores).
// Its launch: grid (ceil(N / 128), S), block 128, no shared memory, argument MqaLogitsParams.
inline constexpr const char* kReferenceKernelName = "mqa_logits_reference";

}  // namespace mqajit
