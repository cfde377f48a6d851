#pragma once
// The argument of the top-k select kernel (topk_select.cuh). Shared by host code and device code:
// plain types only, no standard headers.

struct TopkSelectParams {
    const float* logits;        // [rows, seq_len_kv]: n stride 1; only each row's window is read
    const int* cu_starts;       // [rows]: the rows' windows [cu_starts, cu_ends), clamped to [0, N)
    const int* cu_ends;         // [rows]
    int* indices;               // int32 [rows, k]: k stride 1
    float* values;              // float32 [rows, k], or null: the selected logits beside the indices
    const int* only_rows;       // [rows], or null: rows whose entry is 0 are left as they are

    long long logits_stride;    // elements between rows
    long long indices_stride;
    long long values_stride;

    int rows;
    int seq_len_kv;             // N
    int k;                      // 1 .. MQA_TOPK_MAX_K
    int sort_by_logit;          // 1: each row's selection by logit descending; 0: by key ascending
};

// The most keys one row may select: the kernel sorts its selection in shared memory.
#define MQA_TOPK_MAX_K 4096
// Threads per block (one block per row).
#define MQA_TOPK_THREADS 512
