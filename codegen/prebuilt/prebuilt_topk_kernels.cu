// The mqa_topk select kernel nvcc compiles at build time, for every arch of the fatbin: it needs
// nothing arch-specific, and serves mqa_topk() on every NVIDIA GPU the library runs on.

#include "topk_select.cuh"

MQA_TOPK_SELECT_KERNEL(mqa_topk_select)
