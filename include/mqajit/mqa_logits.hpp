#pragma once
// The MQA-logits operator ("lightning indexer"):
//   logits[i, j] = kv_scales[j] * sum_h weights[i, h] * relu(dot(q[i, h, :], kv[j, :]))
// for cu_starts[i] <= j < cu_ends[i] (clamped to [0, N)); -inf elsewhere when clean_logits is set.

#include <string>

#include "mqajit/export.hpp"
#include "mqajit/tensor.hpp"

namespace mqajit {

// What served a call: filled in when MqaLogitsOptions::report points somewhere.
struct DispatchReport {
    std::string kernel;  // "baseline" or a variant name
    std::string reason;  // why this kernel: tuned row, fallback cause, explicit request
};

struct MqaLogitsOptions {
    bool clean_logits = true;
    void* stream = nullptr;  // a CUstream (nullptr: the legacy default stream)
    // Empty: the tuned table decides. "baseline": the pre-built kernel. Otherwise a variant name,
    // which must be able to run here (an mqajit::Error says why not).
    std::string variant{};
    // KV splits per query block. 0: the kernel family's own rule. A positive count is honoured by
    // the sm_90a wgmma family (rounded so no split is empty) and ignored by the others; it is for
    // experiments and tuning, results are identical for any count.
    int kv_splits = 0;
    // Multiprocessors the call may use. 0: all of them. A positive count caps the persistent grid
    // of the sm_90a wgmma family (and its split model), for engines that keep SMs for other work
    // (DeepGEMM's set_num_sms); a count above the device's means all. The other families launch one
    // block per unit and ignore it.
    int num_sms = 0;
    // 0: dense rows, logits is [S, N] and row i holds logits[i, j] at column j. A positive count:
    // compressed rows, logits is [S, max_seqlen_k] and row i holds logits[i, cu_starts[i] + c] at
    // column c < max_seqlen_k; needs clean_logits = false. Columns past a row's window (and before
    // a negative cu_starts[i]) hold anything; no kernel writes outside [0, max_seqlen_k).
    int max_seqlen_k = 0;
    DispatchReport* report = nullptr;
    // Programmatic dependent launch (DeepGEMM's set_pdl): on sm_90+ the kernels may start while the
    // kernel before them on the stream finishes, and wait for it before they touch memory; they
    // also let the next kernel start early. Only a next kernel launched the same way (and waiting
    // likewise) overlaps; others start after the call as always. Ignored elsewhere.
    bool pdl = false;
};

// q:          float8_e4m3 [S, H, D], d and h dense (strides [s_stride, D, 1])
// kv:         float8_e4m3 [N, D], d dense
// kv_scales:  float32 [N], dense
// weights:    float32 [S, H], h dense
// cu_starts:  int32 [S], dense;  cu_ends: int32 [S], dense
// logits:     float32 [S, N], n dense, row stride >= N (padded rows are fine); [S, max_seqlen_k]
//             with compressed rows; or bfloat16 (the float32 values rounded to nearest even).
// All pointers are device memory of the current context (the caller's duty: nothing is read to
// check it); logits overlapping an input is refused. Every size is at least 1 (an empty problem is
// refused; skip the call); the stride of a size-1 dimension is ignored. The call is asynchronous on
// `stream`, never synchronizes, and allocates nothing after the first call for a shape
// (graph-capturable). Bad input raises mqajit::Error (invalid_argument) before anything is launched.
MQAJIT_API void mqa_logits(const TensorView& q, const TensorView& kv, const TensorView& kv_scales,
                           const TensorView& weights, const TensorView& cu_starts, const TensorView& cu_ends,
                           const TensorView& logits, const MqaLogitsOptions& options = {});

// The same operator computed by an obviously correct kernel (fp32 on CUDA cores, one thread per
// output): slow, for checking results. Same argument rules as mqa_logits(); max_seqlen_k as in
// MqaLogitsOptions.
MQAJIT_API void mqa_logits_reference(const TensorView& q, const TensorView& kv, const TensorView& kv_scales,
                                     const TensorView& weights, const TensorView& cu_starts,
                                     const TensorView& cu_ends, const TensorView& logits, bool clean_logits = true,
                                     void* stream = nullptr, int max_seqlen_k = 0);

}  // namespace mqajit
