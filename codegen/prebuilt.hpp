#pragma once
// Kernels compiled by nvcc at build time and linked into the library as one fatbin: the baseline
// (the mma family's baseline variant for each supported heads/head_dim) and the reference kernel.

#include <span>
#include <string>

namespace mqajit {

// The fatbin bytes (cubins for MQAJIT_CUDA_ARCHS plus PTX for the newest), loadable with cuModuleLoadData.
std::span<const char> prebuilt_fatbin();

// extern "C" name of the baseline kernel for (heads, head_dim), e.g. "mqa_logits_baseline_h32_d128".
std::string baseline_kernel_name(int heads, int head_dim);

// extern "C" name of the reference kernel (one thread per output element, fp32 on CUDA cores).
// Its launch: grid (ceil(N / 128), S), block 128, no shared memory, argument MqaLogitsParams.
inline constexpr const char* kReferenceKernelName = "mqa_logits_reference";

}  // namespace mqajit
