#pragma once
// The kernels every build has pre-built for its vendors, by name: the baseline (one per heads and
// head_dim) and the reference kernel. The binaries come from the backends (codegen/prebuilt/ for
// NVIDIA, codegen/prebuilt_amd/ for AMD).

#include <string>
#include <string_view>

#include "codegen/launch_plan.hpp"
#include "codegen/kernel_family.hpp"
#include "variants/variant.hpp"

namespace mqajit {

// extern "C" name of the baseline kernel for (heads, head_dim), e.g. "mqa_logits_baseline_h32_d128".
// Throws Error(unsupported) for heads/head_dim the baseline is not built for.
std::string baseline_kernel_name(int heads, int head_dim);

// A pre-built baseline: the variant it was compiled from (whose family plans its launch) and its name.
struct PrebuiltBaseline {
    Variant variant;
    std::string kernel_name;
};

// extern "C" name of the reference kernel (reference_mqa_logits.cuh: one thread per output
// element, fp32, e4m3 decoded in software), the same for every vendor.
inline constexpr const char* kReferenceKernelName = "mqa_logits_reference";

// The reference kernel's launch for `shape`: grid (ceil(N / 128), min(S, 65535)), block 128, no
// shared memory; rows past the grid's height are looped over. Its argument is MqaLogitsParams.
LaunchConfig reference_launch_config(const ProblemShape& shape);

// The paged_mqa_logits reference kernel (reference_paged_mqa_logits.cuh) and its launch: grid
// (ceil(max_context_len / 128), min(B * next_n, 65535)), block 128; its argument is PagedMqaLogitsParams.
inline constexpr const char* kPagedReferenceKernelName = "paged_mqa_logits_reference";

// extern "C" name of the paged baseline for a call, e.g. "paged_mqa_logits_baseline_h64_d128_n2", the
// same for every vendor. Throws Error(unsupported) for a shape the pre-built baselines lack (heads 32
// or 64, head_dim 64 or 128, next_n 1 to 4, 64-token cache blocks); `jit_op` names the variants that
// would serve it instead ("pwgmma", "pmfma").
std::string paged_baseline_kernel_name(const PagedProblemShape& shape, std::string_view jit_op);
LaunchConfig paged_reference_launch_config(const PagedProblemShape& shape);

}  // namespace mqajit
