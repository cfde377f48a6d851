#include "runtime/mqa_topk_path.hpp"

#include <fmt/format.h>

#include "codegen/family_registry.hpp"
#include "core/check.hpp"
#include "runtime/backend.hpp"
#include "runtime/mqa_topk_layout.hpp"

namespace mqajit {
namespace {

// NOTES: where the fused path is expected to win: windows long against its candidate buffer, so
// that the threshold rejects most logits. A placeholder: the fused path has not run on a GPU yet,
// and python/benchmarks/topk_time.py's first run on the H200 is to set the crossover.
bool fused_expected_faster(const TopkPathQuery& query, const FusedTopkLayout& layout) {
    return query.seq_len_kv >= 4 * std::int64_t{layout.capacity};
}

// Why the fused path cannot serve the call; empty when it can.
std::string fused_unavailable(const TopkPathQuery& query, const FusedTopkLayout& layout,
                              const std::optional<Variant>& twin) {
    if (!twin) {
        return fmt::format("no fused top-k kernel computes the values of {} (fused kernels: twins of sm_90a wgmma "
                           "variants)", query.logits_variant ? query.logits_variant->name() : "the baseline");
    }
    const std::int64_t needed = layout.logits + mqa_topk_row_bytes(query.seq_len_kv);
    if (query.workspace_bytes < needed) {
        return fmt::format("the workspace holds {} bytes; the fused path needs {} (mqa_topk_workspace_bytes() with k = {})",
                           query.workspace_bytes, needed, query.k);
    }
    if (!query.kv_rows_aligned) return "kv's rows must start on 16-byte boundaries for the fused path's key sample";
    return {};
}

}  // namespace

std::optional<Variant> selecting_variant(const std::optional<Variant>& tuned, const Arch& arch, int heads,
                                         int head_dim) {
    if (tuned) return tuned;
    try {
        return backend_for(arch).baseline(arch, heads, head_dim).variant;
    } catch (const Error&) {
        return std::nullopt;  // no baseline here: no twin either, which decide_topk_path() says
    }
}

MqaTopkPath parse_mqa_topk_path(std::string_view name) {
    if (name == "auto") return MqaTopkPath::automatic;
    if (name == "fused") return MqaTopkPath::fused;
    if (name == "unfused") return MqaTopkPath::unfused;
    MQAJIT_FAIL(invalid_argument, "path is '{}'; pass 'auto', 'fused' or 'unfused'", name);
}

TopkPathDecision decide_topk_path(const TopkPathQuery& query) {
    if (query.requested == MqaTopkPath::unfused) return {false, std::nullopt, "the unfused path, as requested"};
    const FusedTopkLayout layout = fused_topk_layout(query.seq_len, query.seq_len_kv, query.k);
    const MqaTopkFamily* family = query.logits_variant ? topk_family_twinning(*query.logits_variant) : nullptr;
    const std::optional<Variant> twin = family ? family->topk_twin(*query.logits_variant) : std::nullopt;
    const std::string unavailable = fused_unavailable(query, layout, twin);
    MQAJIT_CHECK_KIND(unsupported, query.requested != MqaTopkPath::fused || unavailable.empty(),
                      "mqa_topk: the fused path cannot serve this call: {}", unavailable);
    if (!unavailable.empty()) return {false, std::nullopt, fmt::format("the unfused path: {}", unavailable)};
    if (query.requested == MqaTopkPath::fused) return {true, twin, "the fused path, as requested"};
    if (!fused_expected_faster(query, layout)) {
        return {false, std::nullopt,
                fmt::format("the unfused path: N = {} is below 4 x the fused path's {} candidate slots per row",
                            query.seq_len_kv, layout.capacity)};
    }
    return {true, twin,
            fmt::format("the fused path: N = {} is at least 4 x its {} candidate slots per row", query.seq_len_kv,
                        layout.capacity)};
}

}  // namespace mqajit
