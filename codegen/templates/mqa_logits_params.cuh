#pragma once
// The one kernel argument every mqa_logits kernel takes (passed by value as a __grid_constant__).
// Shared by host code and device code (nvcc and NVRTC): plain types only, no standard headers.

struct alignas(64) MqaTensorMap {
    // An opaque CUtensorMap (128 bytes, 64-byte aligned), filled on the host by
    // cuTensorMapEncodeTiled for families that load with TMA; zero otherwise.
    unsigned long long words[16];
};

struct MqaLogitsParams {
    const unsigned char* q;     // e4m3 [S, H, D]: d stride 1, h stride D
    const unsigned char* kv;    // e4m3 [N, D]: d stride 1
    const float* kv_scales;     // [N]
    const float* weights;       // [S, H]: h stride 1
    const int* cu_starts;       // [S]
    const int* cu_ends;         // [S]
    void* logits;               // float32, or bfloat16 with logits_bf16; [S, N] (or [S, compressed_columns]): n stride 1

    long long q_stride_s;       // elements
    long long kv_stride_n;      // elements
    long long weights_stride_s; // elements
    long long logits_stride_s;  // elements

    int seq_len;                // S
    int seq_len_kv;             // N
    int heads;                  // H (generated kernels also bake it in; checked on launch)
    int head_dim;               // D
    int clean_logits;           // 1: write -inf outside each row's window
    int num_kv_splits;          // KV ranges per q-block, chosen at launch
    int num_q_blocks;           // ceil(S / rows per block)
    int logits_bf16;            // 1: logits are bfloat16 (rounded to nearest even), 0: float32
    int compressed_columns;     // 0: dense rows. > 0: row i holds key column j at j - cu_starts[i], below this count

    // The mqa_topk family's kernels only (null and 0 otherwise): they store no logits; a logit inside
    // row i's window that is not below topk_thresholds[i] goes to row i's candidate buffer.
    const float* topk_thresholds; // [S]
    int* topk_counts;             // [S]: candidates found (may exceed the capacity); zero before the launch,
                                  // or the window's size where the threshold is -inf (slots by key then)
    int* topk_keys;               // [S, topk_capacity]: key columns, in no particular order
    float* topk_values;           // [S, topk_capacity]: their logits
    int topk_capacity;            // slots per row; candidates past it are counted and dropped

    MqaTensorMap tma_q;         // 3-D map over q (d, h, s), for TMA families
    MqaTensorMap tma_kv;        // 2-D map over kv (d, n), for TMA families
};
