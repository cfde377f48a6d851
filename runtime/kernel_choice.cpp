#include "runtime/kernel_choice.hpp"

#include <fmt/format.h>

#include "codegen/variant_registry.hpp"
#include "core/check.hpp"
#include "core/settings.hpp"
#include "runtime/dispatch_support.hpp"
#include "tuning_db/tuning_db.hpp"

namespace mqajit {
namespace {

// "tuned row X (seq_len 1024, seq_len_kv 8192)", with what differs from the call's own group.
std::string tuned_row_reason(const TunedRow& row, const ShapeKey& call) {
    std::string text = fmt::format("tuned row {} (seq_len {}, seq_len_kv {}", row.origin, row.key.seq_len,
                                   row.key.seq_len_kv);
    if (row.key.cu_num != call.cu_num) text += fmt::format("; tuned at the nearest SM count, {}", row.key.cu_num);
    if (row.key.clean_logits != call.clean_logits)
        text += fmt::format("; tuned with clean_logits={}, none with {}", row.key.clean_logits, call.clean_logits);
    if (row.key.logits_dtype != call.logits_dtype)
        text += fmt::format("; tuned with logits_dtype={}, none with {}", row.key.logits_dtype, call.logits_dtype);
    return text + ")";
}

}  // namespace

ShapeKey logits_tuning_key(const Arch& arch, int multiprocessors, const ProblemShape& shape, bool clean_logits) {
    return ShapeKey{.arch = arch.name, .cu_num = multiprocessors, .heads = shape.heads, .head_dim = shape.head_dim,
                    .clean_logits = clean_logits ? 1 : 0,
                    .logits_dtype = std::string(kLogitsDtypes[shape.logits_bf16 ? 1 : 0]),
                    .seq_len = shape.seq_len, .seq_len_kv = shape.seq_len_kv};
}

KernelChoice choose_logits_kernel(const TuningDb& database, const Arch& arch, int multiprocessors,
                                  const ProblemShape& shape, bool clean_logits, const std::string& requested,
                                  std::string_view device) {
    if (requested == "baseline") return {std::nullopt, "baseline requested"};
    const auto& registry = VariantRegistry::instance();
    if (!requested.empty()) {
        const Variant variant = Variant::parse(requested);
        const Support support = registry.supports(arch, shape.heads, shape.head_dim, variant);
        MQAJIT_CHECK_KIND(unsupported, support.ok, "variant {} cannot run on {}: {}", requested, device,
                          support.reason);
        return {variant, "variant requested by the caller"};
    }
    if (settings().disable_jit) return {std::nullopt, "MQAJIT_DISABLE_JIT is set"};
    const ShapeKey key = logits_tuning_key(arch, multiprocessors, shape, clean_logits);
    const TunedRow* row = database.lookup(key);
    if (row == nullptr) return {std::nullopt, "no tuned row for this arch, SM count, heads and head_dim"};
    if (row->backend != kBackendJit) return {std::nullopt, fmt::format("tuned row {} picks the baseline", row->origin)};
    std::string unparsable;
    const std::optional<Variant> parsed = parse_tuned_variant(row->origin, row->variant, &unparsable);
    if (!parsed) return {std::nullopt, std::move(unparsable)};
    const Support support = registry.supports(arch, shape.heads, shape.head_dim, *parsed);
    if (!support.ok)
        return {std::nullopt, fmt::format("tuned variant {} cannot run here: {}", row->variant, support.reason)};
    return {*parsed, tuned_row_reason(*row, key)};
}

}  // namespace mqajit
