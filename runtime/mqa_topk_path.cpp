#include "runtime/mqa_topk_path.hpp"

#include <fmt/format.h>

#include "codegen/family_registry.hpp"
#include "codegen/variant_registry.hpp"
#include "core/check.hpp"
#include "core/settings.hpp"
#include "runtime/backend.hpp"
#include "runtime/dispatch_support.hpp"
#include "runtime/mqa_topk_layout.hpp"
#include "tuning_db/check.hpp"
#include "tuning_db/tuning_db.hpp"

namespace mqajit {
namespace {

// NOTES: where the fused path is expected to win: windows long against its candidate buffer, so
// that the threshold rejects most logits and the per-row work around the twgmma kernel is spread
// over many keys. Measured on an H100 (2026-12-05 night, the branch-free twgmma epilogue with an
// eight-tile stage; k = 2048, 5120 slots; S = 1024, 4096; H = 32, 64;
// docs/data/2026-12-05-h100-night/stage8_crossover.txt): the fused path takes 0.94-1.03x the
// unfused path's time at N = 32768, 0.84-0.94x at 65536 and 0.75-0.88x at 131072. The crossover
// is taken between the first two: 10 x the slots (51200 keys at k = 2048).
constexpr std::int64_t kFusedFromSlotsTimes = 10;

bool fused_expected_faster(const TopkPathQuery& query, const FusedTopkLayout& layout) {
    return query.seq_len_kv >= kFusedFromSlotsTimes * layout.capacity;
}

// Why the fused path cannot serve the call; empty when it can.
std::string fused_unavailable(const TopkPathQuery& query, const FusedTopkLayout& layout,
                              const std::optional<Variant>& twin) {
    if (!twin) {
        return fmt::format("no fused top-k kernel computes the values of {} (fused kernels: twins of sm_90a wgmma "
                           "variants)", query.logits_variant ? query.logits_variant->name() : "the baseline");
    }
    if (!query.jit_enabled) return "MQAJIT_DISABLE_JIT is set, and the fused kernel is generated at run time";
    const std::int64_t needed = layout.logits + mqa_topk_row_bytes(query.seq_len_kv);
    if (query.workspace_bytes < needed) {
        return fmt::format("the workspace holds {} bytes; the fused path needs {} (mqa_topk_workspace_bytes() with k = {})",
                           query.workspace_bytes, needed, query.k);
    }
    if (!query.kv_rows_aligned) return "kv's rows must start on 16-byte boundaries for the fused path's key sample";
    return {};
}

TopkPathQuery path_query(const TopkQuery& query, std::optional<Variant> logits_variant, MqaTopkPath requested) {
    return {.logits_variant = std::move(logits_variant), .requested = requested, .seq_len = query.seq_len,
            .seq_len_kv = query.seq_len_kv, .k = query.k, .workspace_bytes = query.workspace_bytes,
            .kv_rows_aligned = query.kv_rows_aligned, .jit_enabled = !settings().disable_jit};
}

Support topk_support(const TopkQuery& query, const Variant& variant) {
    return VariantRegistry::for_op(kernel_family_for(variant).kernel_op())
        .supports(query.arch, query.heads, query.head_dim, variant);
}

// The caller named a fused kernel: the fused path with it, or an error saying why it cannot serve.
TopkChoice requested_fused_kernel(const TopkQuery& query, const Variant& topk_variant) {
    MQAJIT_CHECK_KIND(unsupported, query.path != MqaTopkPath::unfused,
                      "mqa_topk: variant {} is a fused kernel, and the unfused path was requested; name an "
                      "mqa_logits variant or ask for path 'fused' or 'auto'", topk_variant.name());
    const Support support = topk_support(query, topk_variant);
    MQAJIT_CHECK_KIND(unsupported, support.ok, "variant {} cannot run on {}: {}", topk_variant.name(), query.device,
                      support.reason);
    const Variant twin = topk_family_for(topk_variant).logits_twin(topk_variant);
    (void)decide_topk_path(path_query(query, twin, MqaTopkPath::fused));  // throws if it cannot serve
    return {.fused = true, .topk_variant = topk_variant, .logits = {twin, "the twin of the requested fused kernel"},
            .logits_pinned = true, .row = std::nullopt, .reason = "the fused path, with the variant requested"};
}

// The mqa_topk table's row for the call and the kernel it names, when one serves and can run here.
struct TunedTopk {
    TopkTunedRow row;
    std::optional<Variant> variant;  // nullopt: the baseline
};

std::optional<TunedTopk> tuned_topk(const TuningDb& database, const TopkQuery& query, std::string& skipped) {
    const TopkShapeKey key{.arch = query.arch.name, .cu_num = query.cu_num, .heads = query.heads,
                           .head_dim = query.head_dim, .k = query.k, .seq_len = query.seq_len,
                           .seq_len_kv = query.seq_len_kv};
    const TopkTunedRow* row = database.lookup(key);
    if (row == nullptr) return std::nullopt;
    if (row->backend != kBackendJit) return TunedTopk{*row, std::nullopt};
    const std::optional<Variant> variant = parse_tuned_variant(row->origin, row->variant, &skipped);
    if (!variant) return std::nullopt;
    if (auto problem = tuning::unrunnable_problem(*row)) {
        skipped = fmt::format("mqa_topk row {} is not used: {}", row->origin, *problem);
        return std::nullopt;
    }
    return TunedTopk{*row, variant};
}

// "mqa_topk row X (seq_len 1024, seq_len_kv 65536)", with the SM count when it is not the call's.
std::string row_words(const TopkTunedRow& row, const TopkQuery& query) {
    return fmt::format("mqa_topk row {} (seq_len {}, seq_len_kv {}{})", row.origin, row.key.seq_len,
                       row.key.seq_len_kv,
                       row.key.cu_num != query.cu_num
                           ? fmt::format("; tuned at the nearest SM count, {}", row.key.cu_num)
                           : std::string());
}

// The path for a row that names a fused kernel: fused where it can serve, else unfused with its twin.
TopkChoice from_fused_row(const TopkQuery& query, const TunedTopk& tuned) {
    const Variant& topk_variant = *tuned.variant;
    const Variant twin = topk_family_for(topk_variant).logits_twin(topk_variant);
    TopkChoice choice{.fused = false, .topk_variant = std::nullopt,
                      .logits = {twin, fmt::format("the twin of {}'s fused kernel", row_words(tuned.row, query))},
                      .logits_pinned = true, .row = tuned.row, .reason = {}};
    if (query.path == MqaTopkPath::unfused) {
        choice.reason = "the unfused path, as requested";
        return choice;
    }
    TopkPathQuery path = path_query(query, twin, query.path);
    path.tuned_fused = true;
    const TopkPathDecision decision = decide_topk_path(path);
    choice.fused = decision.fused;
    choice.topk_variant = decision.fused ? std::optional(topk_variant) : std::nullopt;
    choice.reason = decision.fused ? fmt::format("the fused path: {} chose it", row_words(tuned.row, query))
                                   : decision.reason;
    return choice;
}

// A row that names the unfused path's logits kernel (an mqa_logits variant or the baseline).
TopkChoice from_unfused_row(const TopkQuery& query, const TunedTopk& tuned) {
    TopkChoice choice{.fused = false, .topk_variant = std::nullopt,
                      .logits = {tuned.variant, fmt::format("chosen by {}", row_words(tuned.row, query))},
                      .logits_pinned = true, .row = tuned.row,
                      .reason = fmt::format("the unfused path: {} chose it", row_words(tuned.row, query))};
    if (query.path != MqaTopkPath::fused) return choice;
    const std::optional<Variant> selecting = selecting_variant(tuned.variant, query.arch, query.heads, query.head_dim);
    const TopkPathDecision decision = decide_topk_path(path_query(query, selecting, MqaTopkPath::fused));
    choice.fused = true;
    choice.topk_variant = decision.topk_variant;
    choice.logits = {selecting, choice.logits.reason};
    choice.reason = decision.reason;
    return choice;
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
    if (query.tuned_fused) return {true, twin, "the fused path, as tuned"};
    if (!fused_expected_faster(query, layout)) {
        return {false, std::nullopt,
                fmt::format("the unfused path: N = {} is below {} x the fused path's {} candidate slots per row",
                            query.seq_len_kv, kFusedFromSlotsTimes, layout.capacity)};
    }
    return {true, twin,
            fmt::format("the fused path: N = {} is at least {} x its {} candidate slots per row", query.seq_len_kv,
                        kFusedFromSlotsTimes, layout.capacity)};
}

TopkChoice choose_topk(const TuningDb& database, const TopkQuery& query) {
    if (!query.variant.empty() && query.variant != kBackendBaseline) {
        const Variant requested = Variant::parse(query.variant);
        if (kernel_family_for(requested).kernel_op() == KernelOp::mqa_topk) {
            return requested_fused_kernel(query, requested);
        }
    }
    std::string skipped;
    if (query.variant.empty() && !settings().disable_jit) {
        if (const std::optional<TunedTopk> tuned = tuned_topk(database, query, skipped)) {
            if (tuned->variant && kernel_family_for(*tuned->variant).kernel_op() == KernelOp::mqa_topk)
                return from_fused_row(query, *tuned);
            return from_unfused_row(query, *tuned);
        }
    }
    const ProblemShape shape{.heads = query.heads, .head_dim = query.head_dim, .seq_len = query.seq_len,
                             .seq_len_kv = query.seq_len_kv, .num_sms = 0, .logits_bf16 = false};
    TopkChoice choice{.fused = false, .topk_variant = std::nullopt,
                      .logits = choose_logits_kernel(database, query.arch, query.cu_num, shape, false,
                                                     query.variant, query.device),
                      .logits_pinned = !query.variant.empty(), .row = std::nullopt, .reason = {}};
    if (!skipped.empty()) choice.logits.reason = fmt::format("{}; {}", skipped, choice.logits.reason);
    const std::optional<Variant> selecting =
        query.path == MqaTopkPath::unfused
            ? choice.logits.variant
            : selecting_variant(choice.logits.variant, query.arch, query.heads, query.head_dim);
    const TopkPathDecision decision = decide_topk_path(path_query(query, selecting, query.path));
    choice.fused = decision.fused;
    choice.topk_variant = decision.topk_variant;
    if (decision.fused) choice.logits.variant = selecting;
    choice.reason = decision.reason;
    return choice;
}

}  // namespace mqajit
