// The AMD kernels clang-22 compiles at build time into one code object per arch
// (codegen/prebuilt_amd/CMakeLists.txt): the baseline, the gfx9 mfma template at the variant of
// gfx9_baseline.hpp for every heads/head_dim it serves, under the NVIDIA baseline's kernel names;
// and the reference kernel (reference_mqa_logits.cuh), under the NVIDIA one's name. The same for
// paged_mqa_logits (decode): the gfx9 pmfma template at gfx9_baseline.hpp's paged variant for every
// heads/head_dim/next_n, under the NVIDIA paged baselines' names, and reference_paged_mqa_logits.cuh.

#include "gfx9_baseline.hpp"
#include "gfx9_mqa_logits.cuh"
#include "gfx9_paged_mqa_logits.cuh"
#include "reference_mqa_logits.cuh"
#include "reference_paged_mqa_logits.cuh"

#if defined(__gfx950__)
#define MQA_GFX9_BASELINE_K MQA_GFX9_BASELINE_K_GFX950
#elif defined(__gfx942__)
#define MQA_GFX9_BASELINE_K MQA_GFX9_BASELINE_K_GFX942
#else
#error "the AMD baseline is built for gfx942 and gfx950 only"
#endif

#define MQA_GFX9_BASELINE_KERNEL(HEADS, HEAD_DIM)                                                           \
    MQA_GFX9_MQA_LOGITS_KERNEL(mqa_logits_baseline_h##HEADS##_d##HEAD_DIM, HEADS, HEAD_DIM, MQA_GFX9_BASELINE_M, \
                               MQA_GFX9_BASELINE_K, MQA_GFX9_BASELINE_BLOCK_KV, MQA_GFX9_BASELINE_ROWS,       \
                               MQA_GFX9_BASELINE_WAVES, MQA_GFX9_BASELINE_BUFFERS)

MQA_GFX9_BASELINE_KERNEL(32, 64)
MQA_GFX9_BASELINE_KERNEL(32, 128)
MQA_GFX9_BASELINE_KERNEL(64, 64)
MQA_GFX9_BASELINE_KERNEL(64, 128)

MQA_REFERENCE_MQA_LOGITS_KERNEL(mqa_logits_reference)

#define MQA_GFX9_PAGED_BASELINE_KERNEL(HEADS, HEAD_DIM, NEXT_N)                                                 \
    MQA_GFX9_PAGED_KERNEL(paged_mqa_logits_baseline_h##HEADS##_d##HEAD_DIM##_n##NEXT_N, HEADS, HEAD_DIM,       \
                          MQA_GFX9_BASELINE_M, MQA_GFX9_BASELINE_K, MQA_GFX9_PAGED_BASELINE_BLOCK_KV, NEXT_N,  \
                          MQA_GFX9_PAGED_BASELINE_WAVES, MQA_GFX9_PAGED_BASELINE_BUFFERS)
#define MQA_GFX9_PAGED_BASELINES(HEADS, HEAD_DIM)    \
    MQA_GFX9_PAGED_BASELINE_KERNEL(HEADS, HEAD_DIM, 1) \
    MQA_GFX9_PAGED_BASELINE_KERNEL(HEADS, HEAD_DIM, 2) \
    MQA_GFX9_PAGED_BASELINE_KERNEL(HEADS, HEAD_DIM, 3) \
    MQA_GFX9_PAGED_BASELINE_KERNEL(HEADS, HEAD_DIM, 4)

MQA_GFX9_PAGED_BASELINES(32, 64)
MQA_GFX9_PAGED_BASELINES(32, 128)
MQA_GFX9_PAGED_BASELINES(64, 64)
MQA_GFX9_PAGED_BASELINES(64, 128)

MQA_REFERENCE_PAGED_MQA_LOGITS_KERNEL(paged_mqa_logits_reference)
