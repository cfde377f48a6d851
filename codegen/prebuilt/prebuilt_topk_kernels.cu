// The mqa_topk kernels nvcc compiles at build time, for every arch of the fatbin: they need nothing
// arch-specific. The select kernel serves the unfused path on every NVIDIA GPU; the fused path's
// helpers serve around the twgmma kernel (sm_90a).

#include "topk_fused.cuh"

MQA_TOPK_SELECT_KERNEL(mqa_topk_select)
MQA_TOPK_FUSED_KERNELS(mqa_topk_sample, mqa_topk_thresholds, mqa_topk_candidates)
