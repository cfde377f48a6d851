#pragma once
// The keys of the tuning tables, one per operator: ShapeKey for mqa_logits (prefill),
// PagedShapeKey for paged_mqa_logits (decode) and TopkShapeKey for mqa_topk. Each lists its columns
// once, in `columns` (table_key.hpp says how that list is used), and describes its table in `kOp`.

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "tuning_db/table_key.hpp"

namespace mqajit {

// The mode of a prefill row from a table, database or bench file that has no clean_logits column.
// NOTES: everything written before the column existed was measured by mqajit with
// clean_logits=True (MqaLogitsOptions' default then as now), so such a row is a clean_logits=1 row.
inline constexpr int kCleanLogitsWithoutColumn = 1;

// mqa_logits: group (arch, cu_num, heads, head_dim, clean_logits, logits_dtype); lengths seq_len_kv,
// then seq_len.
struct ShapeKey {
    static constexpr TableOp kOp{.name = "mqa_logits",
                                 .table = "tuned_mqa_logits",
                                 .tuned_prefix = "",
                                 .tuned_suffix = "tuned_mqa_logits.csv",
                                 .mode_without_column = kCleanLogitsWithoutColumn,
                                 .tune_command = "mqajit tune"};

    std::string arch;  // "sm_90a", "gfx950": the CSV files call this column "gfx"
    int cu_num = 0;    // SMs or CUs of the device
    int heads = 0;
    int head_dim = 0;
    // The call's mode the row was tuned in: 1 with -inf written outside each row's window
    // (clean_logits=True), 0 without (what vLLM and SGLang call). A call looks up its own first.
    int clean_logits = 0;
    // The logits' element type the row was tuned with, "float32" or "bfloat16" (kLogitsDtypes):
    // bf16 rows change the store, and with it the best variant at some shapes. Tables and
    // databases without the column hold float32 rows.
    std::string logits_dtype = std::string(kLogitsDtypes[0]);
    std::int64_t seq_len = 0;
    std::int64_t seq_len_kv = 0;

    template <class F, class... Keys>
    static constexpr void columns(F&& f, Keys&... keys) {
        f("arch", kIdentityColumn, keys.arch...);
        f("cu_num", kDeviceColumn, keys.cu_num...);
        f("heads", kIdentityColumn, keys.heads...);
        f("head_dim", kIdentityColumn, keys.head_dim...);
        f("clean_logits", kModeColumn, keys.clean_logits...);
        f("logits_dtype", kOutputColumn, keys.logits_dtype...);
        f("seq_len", kLengthColumn<1>, keys.seq_len...);
        f("seq_len_kv", kLengthColumn<0>, keys.seq_len_kv...);
    }

    // f(column_name, value) for each key column, in table order.
    template <class F>
    void visit(F&& f) const { visit_key(*this, f); }
    template <class F>
    void visit(F&& f) { visit_key(*this, f); }

    auto operator<=>(const ShapeKey&) const = default;
};

// paged_mqa_logits: group (arch, cu_num, next_n, heads, head_dim, block_kv, clean_logits); one
// length, the batch. The context length is no key: a lookup cannot read it (device memory).
struct PagedShapeKey {
    static constexpr TableOp kOp{.name = "paged_mqa_logits",
                                 .table = "tuned_paged_mqa_logits",
                                 .tuned_prefix = "paged_mqa_logits_tuned",
                                 .tuned_suffix = ".csv",
                                 .mode_without_column = std::nullopt,
                                 .tune_command = "mqajit tune --op paged_mqa_logits"};

    std::string arch;
    int cu_num = 0;
    int next_n = 0;    // query tokens per request, 1 to 4
    int heads = 0;
    int head_dim = 0;
    int block_kv = 0;  // tokens per KV-cache block
    int clean_logits = 0;
    std::int64_t batch = 0;  // requests

    template <class F, class... Keys>
    static constexpr void columns(F&& f, Keys&... keys) {
        f("arch", kIdentityColumn, keys.arch...);
        f("cu_num", kDeviceColumn, keys.cu_num...);
        f("next_n", kIdentityColumn, keys.next_n...);
        f("heads", kIdentityColumn, keys.heads...);
        f("head_dim", kIdentityColumn, keys.head_dim...);
        f("block_kv", kIdentityColumn, keys.block_kv...);
        f("clean_logits", kModeColumn, keys.clean_logits...);
        f("batch", kLengthColumn<0>, keys.batch...);
    }

    template <class F>
    void visit(F&& f) const { visit_key(*this, f); }
    template <class F>
    void visit(F&& f) { visit_key(*this, f); }

    auto operator<=>(const PagedShapeKey&) const = default;
};

// mqa_topk: group (arch, cu_num, heads, head_dim, k); lengths seq_len_kv, then seq_len. A row's
// variant is the kernel whose work dominates the call: a twgmma variant for the fused path, or an
// mqa_logits variant for the unfused path with that kernel computing the logits. There is no mode
// column: mqa_topk's logits are never cleaned.
struct TopkShapeKey {
    static constexpr TableOp kOp{.name = "mqa_topk",
                                 .table = "tuned_mqa_topk",
                                 .tuned_prefix = "mqa_topk_tuned",
                                 .tuned_suffix = ".csv",
                                 .mode_without_column = std::nullopt,
                                 .tune_command = "mqajit tune --op mqa_topk"};

    std::string arch;
    int cu_num = 0;
    int heads = 0;
    int head_dim = 0;
    int k = 0;  // keys selected per row
    std::int64_t seq_len = 0;
    std::int64_t seq_len_kv = 0;

    template <class F, class... Keys>
    static constexpr void columns(F&& f, Keys&... keys) {
        f("arch", kIdentityColumn, keys.arch...);
        f("cu_num", kDeviceColumn, keys.cu_num...);
        f("heads", kIdentityColumn, keys.heads...);
        f("head_dim", kIdentityColumn, keys.head_dim...);
        f("k", kIdentityColumn, keys.k...);
        f("seq_len", kLengthColumn<1>, keys.seq_len...);
        f("seq_len_kv", kLengthColumn<0>, keys.seq_len_kv...);
    }

    template <class F>
    void visit(F&& f) const { visit_key(*this, f); }
    template <class F>
    void visit(F&& f) { visit_key(*this, f); }

    auto operator<=>(const TopkShapeKey&) const = default;
};

// Calls f(std::type_identity<Key>{}) for each table's key type, prefill first.
template <class F>
void for_each_table_key(F&& f) {
    f(std::type_identity<ShapeKey>{});
    f(std::type_identity<PagedShapeKey>{});
    f(std::type_identity<TopkShapeKey>{});
}

}  // namespace mqajit
