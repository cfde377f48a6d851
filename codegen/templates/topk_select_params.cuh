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
    int capacity;               // keys a row's select may gather in shared memory (MQA_TOPK_SELECT_CAPACITY)
};

// The most keys one row may select: the kernel sorts its selection in shared memory.
#define MQA_TOPK_MAX_K 4096
// Threads per block (one block per row).
#define MQA_TOPK_THREADS 512

// Keys per pass of the key-order ranking (a bitmap of 2048 words).
#define MQA_TOPK_RANK_SEGMENT 65536

// Bytes before the candidates in mqa_topk_candidates' dynamic shared memory: the sort's selection
// of k entries padded to a power of two (k <= MQA_TOPK_MAX_K = 4096), or the ranking bitmap and its
// word prefixes (16 KiB), whichever is larger.
#define MQA_TOPK_SELECTION_BYTES(k) ((k) <= 2048 ? 16384ll : 32768ll)
// The whole dynamic shared memory of mqa_topk_candidates and mqa_topk_select, with `capacity`
// candidate slots.
#define MQA_TOPK_CANDIDATES_SHARED_BYTES(k, capacity) (MQA_TOPK_SELECTION_BYTES(k) + 8ll * (capacity))
// The select kernel's candidate slots: at k <= 2048, as many as let four blocks share an SM of
// 228 KiB (with the static RadixState and the 1 KiB each block reserves); above, 2 k.
#define MQA_TOPK_SELECT_CAPACITY(k) ((k) <= 2048 ? 4032 : 2 * (k))
