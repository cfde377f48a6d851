// The kernels nvcc compiles at build time (codegen/prebuilt/CMakeLists.txt): the baseline, which is
// the sm80 family's baseline variant mma16x8x16_bkv64_r{128/H}_w4_lds2 (baseline_variant() in
// codegen/families/sm80_mqa_logits/) for each supported (heads, head_dim), and the reference kernel.
// NOTES: the baseline takes the f16 path (K = 16) on every arch, so one kernel serves sm_80 onwards.
// On sm_90a (built when MQAJIT_CUDA_ARCHS has 90) a wgmma baseline is added, which the runtime prefers
// there: see prebuilt_baseline() in codegen/prebuilt.hpp.

#include "reference_mqa_logits.cuh"
#include "sm80_mqa_logits.cuh"

MQA_REFERENCE_MQA_LOGITS_KERNEL(mqa_logits_reference)

//                         name                          heads head_dim bkv rows warps stages fp8_mma
MQA_SM80_MQA_LOGITS_KERNEL(mqa_logits_baseline_h32_d64,  32,   64,      64, 4,   4,    2,     false)
MQA_SM80_MQA_LOGITS_KERNEL(mqa_logits_baseline_h32_d128, 32,   128,     64, 4,   4,    2,     false)
MQA_SM80_MQA_LOGITS_KERNEL(mqa_logits_baseline_h64_d64,  64,   64,      64, 2,   4,    2,     false)
MQA_SM80_MQA_LOGITS_KERNEL(mqa_logits_baseline_h64_d128, 64,   128,     64, 2,   4,    2,     false)

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include "sm90_mqa_logits.cuh"
//             name                                heads head_dim bkv rows math_groups stages
MQA_SM90_KERNEL(mqa_logits_baseline_sm90_h32_d64,  32,   64,      64, 4,   4,          4)
MQA_SM90_KERNEL(mqa_logits_baseline_sm90_h32_d128, 32,   128,     64, 4,   4,          4)
MQA_SM90_KERNEL(mqa_logits_baseline_sm90_h64_d64,  64,   64,      64, 2,   4,          4)
MQA_SM90_KERNEL(mqa_logits_baseline_sm90_h64_d128, 64,   128,     64, 2,   4,          4)
#endif
