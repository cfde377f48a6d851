#pragma once
// Which path serves an mqa_topk call, from what the host knows (no device memory, no device):
// mqa_topk() and explain_topk() ask the same function.

#include <cstdint>
#include <optional>
#include <string>

#include "mqajit/mqa_topk.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace mqajit {

struct TopkPathQuery {
    // The mqa_logits kernel whose values the call selects by: the tuned choice, or the baseline's
    // own variant; nullopt where none is known (no twin then).
    std::optional<Variant> logits_variant;
    MqaTopkPath requested = MqaTopkPath::automatic;
    std::int64_t seq_len = 0, seq_len_kv = 0;
    int k = 0;
    std::int64_t workspace_bytes = 0;
    bool kv_rows_aligned = true;  // kv's base and row stride on 16-byte boundaries
};

struct TopkPathDecision {
    bool fused = false;
    std::optional<Variant> topk_variant;  // the fused kernel, when fused
    std::string reason;
};

// The mqa_logits variant a call selects by: `tuned`, or where the baseline serves, the baseline's
// own variant on `arch` (whose twin, compiled like any variant, runs); nullopt without a baseline.
std::optional<Variant> selecting_variant(const std::optional<Variant>& tuned, const Arch& arch, int heads,
                                         int head_dim);

// Throws Error(unsupported) when the fused path is requested and cannot serve, saying why.
TopkPathDecision decide_topk_path(const TopkPathQuery& query);

}  // namespace mqajit
