// The paged_mqa_logits (decode) kernels nvcc compiles at build time, in a fatbin of their own
// (compiled beside prebuilt_kernels.cu): the reference kernel for every arch and, on sm_90a, the
// baseline for each (heads, head_dim, next_n) the family takes: paged_baseline_variant(heads,
// next_n), pwgmma64x<next_n * heads>x32_bkv64_r<next_n>_w2_lds8 (codegen/families/sm90_paged_mqa_logits/).
// NOTES: only 64-token cache blocks have a baseline; a cache of another block size needs a JIT kernel.

#include "reference_paged_mqa_logits.cuh"

MQA_REFERENCE_PAGED_MQA_LOGITS_KERNEL(paged_mqa_logits_reference)

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include "sm90_paged_mqa_logits.cuh"

#define MQA_PAGED_BASELINES(heads, head_dim)                                                                        \
    MQA_SM90_PAGED_KERNEL(paged_mqa_logits_baseline_h##heads##_d##head_dim##_n1, heads, head_dim, 64, 1, 2, 8, 1) \
    MQA_SM90_PAGED_KERNEL(paged_mqa_logits_baseline_h##heads##_d##head_dim##_n2, heads, head_dim, 64, 2, 2, 8, 1) \
    MQA_SM90_PAGED_KERNEL(paged_mqa_logits_baseline_h##heads##_d##head_dim##_n3, heads, head_dim, 64, 3, 2, 8, 1) \
    MQA_SM90_PAGED_KERNEL(paged_mqa_logits_baseline_h##heads##_d##head_dim##_n4, heads, head_dim, 64, 4, 2, 8, 1)

MQA_PAGED_BASELINES(32, 64)
MQA_PAGED_BASELINES(32, 128)
MQA_PAGED_BASELINES(64, 64)
MQA_PAGED_BASELINES(64, 128)
#endif
