#pragma once
// One row of the tuning table: a shape key and the kernel chosen for it, with its measurements
// and provenance. The key columns are listed once, in ShapeKey::visit; SQL, CSV and JSON derive
// their column lists from it (and from TunedRow::visit_values for the rest).

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

namespace mqajit {

struct ShapeKey {
    std::string arch;  // "sm_90a", "gfx950": the CSV files call this column "gfx"
    int cu_num = 0;    // SMs or CUs of the device
    int heads = 0;
    int head_dim = 0;
    // The call's mode the row was tuned in: 1 with -inf written outside each row's window
    // (clean_logits=True), 0 without (what vLLM and SGLang call). A call looks up its own first.
    int clean_logits = 0;
    std::int64_t seq_len = 0;
    std::int64_t seq_len_kv = 0;

    // f(column_name, value) for each key column, in table order.
    template <class F>
    void visit(F&& f) const { visit_fields(*this, f); }
    template <class F>
    void visit(F&& f) { visit_fields(*this, f); }

    auto operator<=>(const ShapeKey&) const = default;

private:
    template <class Self, class F>
    static void visit_fields(Self& self, F& f) {
        f("arch", self.arch);
        f("cu_num", self.cu_num);
        f("heads", self.heads);
        f("head_dim", self.head_dim);
        f("clean_logits", self.clean_logits);
        f("seq_len", self.seq_len);
        f("seq_len_kv", self.seq_len_kv);
    }
};

// The mode of a row from a table, database or bench file that has no clean_logits column.
// NOTES: everything written before the column existed was measured by mqajit with
// clean_logits=True (MqaLogitsOptions' default then as now), so such a row is a clean_logits=1 row.
inline constexpr int kCleanLogitsWithoutColumn = 1;

// The key columns the lookup rule searches along; the others name a group.
inline bool is_length_column(std::string_view column) { return column == "seq_len" || column == "seq_len_kv"; }

// The lookup rule searches within one group: the key without its two lengths. A group is kept as
// a ShapeKey whose lengths are 0 (GroupKeyView::key()), and looked up by this view of it.
struct GroupKeyView {
    std::string_view arch;
    int cu_num = 0;
    int heads = 0;
    int head_dim = 0;
    int clean_logits = 0;

    static GroupKeyView of(const ShapeKey& key) {
        return {key.arch, key.cu_num, key.heads, key.head_dim, key.clean_logits};
    }
    // The group as a key whose lengths are 0, for visiting its columns.
    ShapeKey key() const {
        return {.arch = std::string(arch), .cu_num = cu_num, .heads = heads, .head_dim = head_dim,
                .clean_logits = clean_logits};
    }
    auto tie() const { return std::tuple(arch, cu_num, heads, head_dim, clean_logits); }
};

inline auto group_tie(const GroupKeyView& group) { return group.tie(); }
inline auto group_tie(const ShapeKey& key) { return GroupKeyView::of(key).tie(); }

// Orders keys by their group alone, ShapeKeys and GroupKeyViews alike (a transparent comparator).
struct GroupLess {
    using is_transparent = void;
    bool operator()(const auto& a, const auto& b) const { return group_tie(a) < group_tie(b); }
};

// "arch=sm_90a cu_num=132 heads=32 head_dim=128 clean_logits=0"
std::string to_string(const GroupKeyView& group);

inline constexpr std::string_view kBackendJit = "jit";
inline constexpr std::string_view kBackendBaseline = "baseline";

struct TunedRow {
    ShapeKey key;
    std::string backend;  // "jit" or "baseline"
    std::string variant;  // a variant name for "jit"; "baseline" for "baseline"
    double us = 0.0;      // the chosen kernel's time
    std::optional<double> baseline_us{};  // the baseline kernel's time at the same shape, if measured
    std::string runner_up{};  // the second-best variant, if the tuner recorded one
    std::string tuner_version{};
    std::string compiler_version{};
    std::string driver_version{};
    std::string date{};
    // Where the row came from: "path/file.csv:12" or "user:/path/tuning.db". Not a table column
    // of the CSV files; the system database keeps it so `db lookup` can name the source line.
    std::string origin{};

    // f(column_name, value) for each non-key column, in table order (origin excluded).
    template <class F>
    void visit_values(F&& f) const { visit_value_fields(*this, f); }
    template <class F>
    void visit_values(F&& f) { visit_value_fields(*this, f); }

    // Whether two rows choose the same kernel (measurements and provenance aside).
    bool same_choice(const TunedRow& other) const {
        return backend == other.backend && variant == other.variant;
    }
    std::string choice() const;  // "jit mfma32x32x64_bkv64_r2_w4_lds3" or "baseline"

private:
    template <class Self, class F>
    static void visit_value_fields(Self& self, F& f) {
        f("backend", self.backend);
        f("variant", self.variant);
        f("us", self.us);
        f("baseline_us", self.baseline_us);
        f("runner_up", self.runner_up);
        f("tuner_version", self.tuner_version);
        f("compiler_version", self.compiler_version);
        f("driver_version", self.driver_version);
        f("date", self.date);
    }
};

// "arch=gfx950 cu_num=256 heads=32 head_dim=128 clean_logits=0 seq_len=1024 seq_len_kv=8192"
std::string to_string(const ShapeKey& key);

// What is wrong with a key (an empty arch, a size that is not positive, a clean_logits other than
// 0 or 1), or nullopt. The arch's spelling is not checked here.
std::optional<std::string> key_problem(const ShapeKey& key);

// Maps a backend name from a CSV to ours: "jit"/"flydsl" -> "jit", "baseline"/"triton" ->
// "baseline" (the imported prefill tables name the FlyDSL and Triton kernels). nullopt: unknown.
std::optional<std::string> normalize_backend(std::string_view name);

// What is wrong with a row (a non-positive size, an unknown backend, a variant name that does
// not parse, a non-positive time), or nullopt when it can be stored.
std::optional<std::string> row_problem(const TunedRow& row);

}  // namespace mqajit
