#pragma once
// Which path and kernels serve an mqa_topk call, from what the host knows (no device memory, no
// device): mqa_topk() and explain_topk() ask the same function, choose_topk().

#include <cstdint>
#include <optional>
#include <string>

#include "mqajit/mqa_topk.hpp"
#include "runtime/kernel_choice.hpp"
#include "tuning_db/tuned_row.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace mqajit {

class TuningDb;

struct TopkPathQuery {
    // The mqa_logits kernel whose values the call selects by: the tuned choice, or the baseline's
    // own variant; nullopt where none is known (no twin then).
    std::optional<Variant> logits_variant;
    MqaTopkPath requested = MqaTopkPath::automatic;
    std::int64_t seq_len = 0, seq_len_kv = 0;
    int k = 0;
    std::int64_t workspace_bytes = 0;
    bool kv_rows_aligned = true;  // kv's base and row stride on 16-byte boundaries
    bool jit_enabled = true;      // the fused kernel is generated: not with MQAJIT_DISABLE_JIT
    bool tuned_fused = false;     // an mqa_topk row chose the fused path: taken wherever it can serve
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

// The path rule for a known logits kernel. Throws Error(unsupported) when the fused path is
// requested and cannot serve, saying why.
TopkPathDecision decide_topk_path(const TopkPathQuery& query);

// Everything the host knows of an mqa_topk call.
struct TopkQuery {
    Arch arch;
    int cu_num = 0;  // the SMs the call may use: the tuning tables' cu_num
    int heads = 0, head_dim = 0;
    std::int64_t seq_len = 0, seq_len_kv = 0;
    int k = 0;
    std::int64_t workspace_bytes = 0;
    bool kv_rows_aligned = true;
    MqaTopkPath path = MqaTopkPath::automatic;
    std::string variant;  // MqaTopkOptions::variant: "", "baseline", an mqa_logits or a twgmma variant
    std::string device;   // names the device in errors: "this NVIDIA H200 (sm_90a)"
};

struct TopkChoice {
    bool fused = false;
    std::optional<Variant> topk_variant;  // the fused kernel, when fused
    // The mqa_logits kernel whose values are selected by (nullopt: the pre-built baseline); the
    // unfused passes run it, and the fused kernel is its twin.
    KernelChoice logits;
    // Whether every unfused pass must run `logits` by name (a request or an mqa_topk row chose it)
    // rather than whatever the mqa_logits table serves the pass's shape with.
    bool logits_pinned = false;
    std::optional<TopkTunedRow> row;  // the mqa_topk table's row that chose, if one did
    std::string reason;
};

// `database`: the tuning tables asked (TuningDb::instance() for a call). In order: a requested
// variant (a twgmma one is the fused path with it; any other is the logits kernel), else the
// mqa_topk table's row (a twgmma variant: the fused path where it can serve; an mqa_logits variant
// or the baseline: the unfused path with it), else the mqa_logits table's choice for the whole
// shape (clean_logits=false) and the path rule. A requested path that cannot be served throws
// Error(unsupported); so does a requested variant that cannot run here.
TopkChoice choose_topk(const TuningDb& database, const TopkQuery& query);

}  // namespace mqajit
