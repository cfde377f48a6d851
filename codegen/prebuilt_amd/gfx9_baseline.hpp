#pragma once
// The AMD baseline variant, shared by its build-time source (baseline_kernels.hip) and the host
// (prebuilt_amd.cpp): mfma32x32x<K>_bkv64_r1_w4_lds2, with K the 32x32 fp8 MFMA's depth (64 on
// gfx950, 16 on gfx942). Four waves of one query row each keep LDS at 48 KiB for H = 64, D = 128,
// inside gfx942's 64 KiB, so one choice serves every supported heads/head_dim on both archs.

#define MQA_GFX9_BASELINE_M 32
#define MQA_GFX9_BASELINE_K_GFX950 64
#define MQA_GFX9_BASELINE_K_GFX942 16
#define MQA_GFX9_BASELINE_BLOCK_KV 64
#define MQA_GFX9_BASELINE_ROWS 1
#define MQA_GFX9_BASELINE_WAVES 4
#define MQA_GFX9_BASELINE_BUFFERS 2

// The AMD paged_mqa_logits (decode) baseline: pmfma32x32x<K>_bkv64_r<next_n>_w2_lds2 (K as above) for
// every heads, head_dim and next_n 1..4, over 64-token cache blocks. Two waves share each block's
// 2 x next_n (token, column tile) pairs; LDS is at most 48.5 KiB (next_n 4, H = 64, D = 128).
#define MQA_GFX9_PAGED_BASELINE_BLOCK_KV 64
#define MQA_GFX9_PAGED_BASELINE_WAVES 2
#define MQA_GFX9_PAGED_BASELINE_BUFFERS 2
