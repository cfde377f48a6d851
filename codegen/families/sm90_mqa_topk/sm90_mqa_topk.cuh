#pragma once
// The sm90_mqa_topk family: the sm90_mqa_logits kernel (same pipeline, wgmma, head sum and so the
// same values) with the candidate epilogue of sm90_topk_epilogue.cuh in place of the logits store.
// Variant `twgmma64x<N>x32_bkv<B>_r<R>_w<W>_lds<S>` is wgmma64x<N>x32_bkv<B>_r<R>_w<W>_lds<S>'s twin.

#include "sm90_topk_epilogue.cuh"
#include "sm90_mqa_logits.cuh"

#define MQA_SM90_TOPK_KERNEL(kernel_name, heads, head_dim, block_kv, rows, math_groups, stages)              \
    extern "C" __global__ void __launch_bounds__((math_groups + 1) * 128, 1)                                  \
        kernel_name(const __grid_constant__ MqaLogitsParams p) {                                              \
        mqa_sm90::sm90_mqa_logits_body<                                                                       \
            mqa_sm90::Sm90Config<heads, head_dim, block_kv, rows, math_groups, stages>, true>(p);             \
    }
