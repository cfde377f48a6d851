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
// This path computes the logits of `rows per pass` rows at a time into the caller's workspace and
// selects from them, so device memory is the outputs plus a workspace of the caller's choosing,
// however large N is (mqa_topk_workspace_bytes()).

#include <cstdint>
#include <string>

#include "mqajit/export.hpp"
#include "mqajit/mqa_logits.hpp"  // DispatchReport
#include "mqajit/tensor.hpp"

namespace mqajit {

struct MqaTopkOptions {
    void* stream = nullptr;  // a CUstream (nullptr: the legacy default stream)
    // false: each row's keys in ascending key order; true: by logit, largest first (a sort of the
    // selection in shared memory, which costs time at short windows).
    bool sorted = false;
    // The mqa_logits kernel that computes the scores, as MqaLogitsOptions::variant. Empty: the one the
    // tuned table serves the whole call's shape with (clean_logits=false) runs every pass.
    std::string variant{};
    int num_sms = 0;                   // as MqaLogitsOptions::num_sms
    DispatchReport* report = nullptr;  // which mqa_logits kernel served the last pass
};

// The most keys a row may select.
inline constexpr int kMqaTopkMaxK = 4096;

// Bytes of float32 logits one row takes in the workspace (N rounded up to 16 bytes).
MQAJIT_API std::int64_t mqa_topk_row_bytes(std::int64_t seq_len_kv);
// The workspace for a call over S rows and N keys that computes as many rows per pass as fit in
// `max_bytes` (at least one: the result is never below mqa_topk_row_bytes(N)), and never more than S.
MQAJIT_API std::int64_t mqa_topk_workspace_bytes(std::int64_t seq_len, std::int64_t seq_len_kv,
                                                 std::int64_t max_bytes = std::int64_t{512} << 20);

// q, kv, kv_scales, weights, cu_starts, cu_ends: as mqa_logits() takes them.
// indices:   int32 [S, k], k dense, row stride >= k; 1 <= k <= kMqaTopkMaxK.
// values:    float32 [S, k] beside them (the selected logits, -inf in empty slots), k dense; or a
//            view with a null data pointer for none.
// workspace: uint8 [bytes], dense, 16-byte aligned, at least mqa_topk_row_bytes(N): the call
//            computes floor(bytes / mqa_topk_row_bytes(N)) rows per pass.
// Asynchronous on `stream`, never synchronizes, allocates nothing after the first call for a shape.
// Bad input raises mqajit::Error (invalid_argument) before anything is launched; a device without
// the select kernel (AMD, for now) raises Error(unsupported).
MQAJIT_API void mqa_topk(const TensorView& q, const TensorView& kv, const TensorView& kv_scales,
                         const TensorView& weights, const TensorView& cu_starts, const TensorView& cu_ends,
                         const TensorView& indices, const TensorView& values, const TensorView& workspace,
                         const MqaTopkOptions& options = {});

}  // namespace mqajit
