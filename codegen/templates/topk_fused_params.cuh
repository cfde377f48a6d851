#pragma once
// The argument of mqa_topk's fused-path helper kernels (topk_fused.cuh). Shared by host code and
// device code: plain types only, no standard headers. Row pointers are those of the launch's first
// row (the host offsets them for a block of rows).

// Threads of a thresholds block (one row at a time), and the blocks per SM its registers are sized for.
#define MQA_TOPK_THRESHOLDS_THREADS 128
#define MQA_TOPK_THRESHOLDS_MIN_BLOCKS 8

struct TopkFusedParams {
    // The call's operands.
    const unsigned char* kv;     // e4m3 [N, D]
    const float* kv_scales;      // [N]
    const int* cu_starts;        // [rows]
    const int* cu_ends;          // [rows]
    long long kv_stride;         // bytes between kv rows (a multiple of 16)
    int rows;
    int seq_len_kv;              // N
    int head_dim;                // D (a multiple of 16)
    int k;                       // keys a row selects
    int capacity;                // candidate slots per row
    int sample_stride;           // sample key i is key i * sample_stride
    int sample_len;              // ceil(N / sample_stride)
    float oversample;            // candidates a row is meant to keep, over k

    // Workspace.
    unsigned char* sample_kv;    // [sample_len, D]
    float* sample_scales;        // [sample_len]
    int* sample_starts;          // [rows]: the row's window in sample keys
    int* sample_ends;            // [rows]
    const float* sample_logits;  // [rows, sample_len]: mqa_logits over the sample keys
    long long sample_logits_stride;
    float* thresholds;           // [rows]: what the fused kernel keeps a logit at or above
    int* counts;                 // [rows]: candidates the fused kernel found
    const int* candidate_keys;   // [rows, capacity]
    const float* candidate_values;
    int* failed;                 // [rows]: 1 where the candidates cannot give the exact top k
    int* fallback_starts;        // [rows]: the window where failed, empty elsewhere
    int* fallback_ends;

    // Outputs.
    int* indices;                // [rows, k]
    float* values;               // [rows, k], or null
    long long indices_stride;
    long long values_stride;
    int sort_by_logit;
};
