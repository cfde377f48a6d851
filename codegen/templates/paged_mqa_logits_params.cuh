#pragma once
// The one kernel argument every paged_mqa_logits (decode) kernel takes, by value as a
// __grid_constant__. Shared by host code and device code (nvcc and NVRTC): plain types only.
//
// Request b has next_n query tokens; token t of request b is output row b * next_n + t. Its keys
// live in the paged cache: key j of request b is slot j % block_kv of cache block
// block_table[b, j / block_kv]. A cache block is block_kv * head_dim e4m3 bytes (token-major)
// followed by block_kv fp32 scales.

#include "mqa_logits_params.cuh"  // MqaTensorMap

struct PagedMqaLogitsParams {
    const unsigned char* q;        // e4m3 [B, next_n, H, D]: d stride 1, h stride D, t stride H * D
    const float* weights;          // [B * next_n, H]: h stride 1
    const int* context_lens;       // [B] or, with context_lens_2d, [B, next_n] (t stride 1)
    const int* block_table;        // [B, max_blocks]
    const unsigned char* kv_cache; // [num_cache_blocks][block_kv * D key bytes, then block_kv fp32 scales]
    float* logits;                 // [B * next_n, max_context_len]: column stride 1

    long long q_stride_b;          // elements between requests
    long long weights_stride;      // elements between rows
    long long context_lens_stride; // elements between requests (2-D lens)
    long long block_table_stride;  // elements between requests
    long long logits_stride;       // elements between rows
    long long cache_block_bytes;   // bytes between cache blocks (block_kv * (D + 4) when dense)

    int batch;                     // B
    int next_n;
    int heads;                     // H (generated kernels bake it in; checked on launch)
    int head_dim;                  // D
    int block_kv;                  // tokens per cache block
    int max_blocks;                // block_table columns
    int max_context_len;           // logits columns the kernel may write
    int context_lens_2d;           // 1: token t sees keys j < context_lens[b, t]; 0: j < lens[b] - next_n + t + 1
    int clean_logits;              // 1: write -inf to every column of [0, max_context_len) a token does not see
    int num_cache_blocks;
    int programmatic_launch;       // 1: launched with PDL, so the kernel may start before its predecessor ends

    MqaTensorMap tma_q;            // 3-D over q: (d, next_n * H rows of one request, request)
    MqaTensorMap tma_keys;         // 3-D over the cache's keys: (d, slot, cache block)
    MqaTensorMap tma_scales;       // 2-D over the cache's scales: (slot, cache block), fp32
};
