#pragma once
// The indexer's top-k: for each query row i, the k keys j in [cu_starts[i], cu_ends[i]) (clamped to
// [0, N)) with the largest logits as mqa_logits() computes them (the same kernels, so the same
// values). docs/mqa_topk.md has the whole contract:
// - Which keys: among equal logits straddling the k-th place the smaller key indices are kept
//   (-0.0 counts as equal to +0.0, and is returned as +0.0 in values).
// - Order: row i's indices[i, :] hold key positions (absolute, as cu_starts counts them) in
//   ascending key order; with MqaTopkOptions::sorted, by logit, largest first, equal logits by
//   ascending key. Either way the result is deterministic: a rerun gives the same bits.
// - A window of fewer than k keys fills the slots past it with -1 (and -inf in values).
// - Exact: the same set as mqa_logits() followed by a full sort under that rule.
// Two paths compute it (MqaTopkPath): the unfused one writes the logits of a block of rows into the
// caller's workspace and selects from them; the fused one (sm_90a) never writes the logits: its
// kernel keeps per row only the logits above a threshold estimated from a sample of the keys, and
// selects from those. Either way device memory is the outputs plus a workspace of the caller's
// choosing, however large N is (mqa_topk_workspace_bytes()).

#include <cstdint>
#include <string>
#include <string_view>

#include "mqajit/export.hpp"
#include "mqajit/mqa_logits.hpp"  // DispatchReport
#include "mqajit/tensor.hpp"

namespace mqajit {

enum class MqaTopkPath {
    automatic,  // the fused path where it is available and expected to be faster
    fused,      // the fused path, or Error(unsupported) saying why it cannot serve the call
    unfused,    // mqa_logits into the workspace, then the select kernel
};

// "auto", "fused" or "unfused" (the Python and CLI spelling); Error(invalid_argument) otherwise.
MQAJIT_API MqaTopkPath parse_mqa_topk_path(std::string_view name);

struct MqaTopkOptions {
    void* stream = nullptr;  // a CUstream (nullptr: the legacy default stream)
    // false: each row's keys in ascending key order; true: by logit, largest first (a sort of the
    // selection in shared memory, which costs time at short windows).
    bool sorted = false;
    // The kernel: an mqa_logits variant (or "baseline") computing the scores on either path, or a
    // twgmma variant, the fused path's kernel. Empty: the mqa_topk table's row for the call, else the
    // kernel the mqa_logits table serves the whole call's shape with (clean_logits=false); every
    // pass runs it (docs/mqa_topk.md, "Which path and kernels serve a call").
    std::string variant{};
    int num_sms = 0;                   // as MqaLogitsOptions::num_sms
    MqaTopkPath path = MqaTopkPath::automatic;
    // The path and the kernel that computed the scores: "fused <twgmma variant>" or the mqa_logits
    // kernel of the unfused path's last pass, and why.
    DispatchReport* report = nullptr;
    bool pdl = false;  // as MqaLogitsOptions::pdl, for every kernel of the call
};

// The most keys a row may select.
inline constexpr int kMqaTopkMaxK = 4096;

// Bytes of float32 logits one row takes in the workspace (N rounded up to 16 bytes).
MQAJIT_API std::int64_t mqa_topk_row_bytes(std::int64_t seq_len_kv);
// The workspace for a call over S rows and N keys selecting k: the fused path's fixed part
// (candidate buffers of about 2.5 k slots per row, the key sample, per-row state) when it fits in
// `max_bytes` with one row of logits, plus as many rows of logits as fit in what is left (never more
// than S); otherwise the unfused path's, as many rows as fit in `max_bytes`. Never below
// mqa_topk_row_bytes(N).
MQAJIT_API std::int64_t mqa_topk_workspace_bytes(std::int64_t seq_len, std::int64_t seq_len_kv, int k,
                                                 std::int64_t max_bytes = std::int64_t{512} << 20);

// q, kv, kv_scales, weights, cu_starts, cu_ends: as mqa_logits() takes them.
// indices:   int32 [S, k], k dense, row stride >= k, 4-byte aligned; 1 <= k <= kMqaTopkMaxK.
// values:    float32 [S, k] beside them (the selected logits, -inf in empty slots), k dense,
//            4-byte aligned; or a view with a null data pointer for none.
// workspace: uint8 [bytes] (any size up to 2^62), dense, 16-byte aligned, at least
//            mqa_topk_row_bytes(N). Outputs and a workspace that overlap an input or each other
//            are refused. The unfused
//            path computes floor(bytes / mqa_topk_row_bytes(N)) rows per pass; the fused path
//            needs its fixed part first (mqa_topk_workspace_bytes()), and is not taken without it.
// Asynchronous on `stream`, never synchronizes, allocates nothing after the first call for a shape.
// Bad input raises mqajit::Error (invalid_argument) before anything is launched; a device without
// the select kernel (AMD, for now) raises Error(unsupported).
MQAJIT_API void mqa_topk(const TensorView& q, const TensorView& kv, const TensorView& kv_scales,
                         const TensorView& weights, const TensorView& cu_starts, const TensorView& cu_ends,
                         const TensorView& indices, const TensorView& values, const TensorView& workspace,
                         const MqaTopkOptions& options = {});

}  // namespace mqajit
