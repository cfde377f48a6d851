#pragma once
// One row of a tuning table: a shape key (shape_keys.hpp: ShapeKey for mqa_logits, PagedShapeKey
// for paged_mqa_logits, TopkShapeKey for mqa_topk) and the kernel chosen for it, with its
// measurements and provenance. The key columns are listed once per key type; the value columns,
// the same for every table, once in
// TunedRowOf::visit_values. SQL, CSV and JSON derive their column lists from these.

#include <optional>
#include <string>
#include <string_view>

#include "tuning_db/shape_keys.hpp"

namespace mqajit {

inline constexpr std::string_view kBackendJit = "jit";
inline constexpr std::string_view kBackendBaseline = "baseline";

template <class Key>
struct TunedRowOf {
    Key key{};
    std::string backend{};  // "jit" or "baseline"
    std::string variant{};  // a variant name for "jit"; "baseline" for "baseline"
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
    bool same_choice(const TunedRowOf& other) const {
        return backend == other.backend && variant == other.variant;
    }
    // "jit mfma32x32x64_bkv64_r2_w4_lds3" or "baseline"
    std::string choice() const {
        if (backend == kBackendBaseline) return std::string(kBackendBaseline);
        return backend + " " + variant;
    }

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

using TunedRow = TunedRowOf<ShapeKey>;             // mqa_logits
using PagedTunedRow = TunedRowOf<PagedShapeKey>;   // paged_mqa_logits
using TopkTunedRow = TunedRowOf<TopkShapeKey>;     // mqa_topk

// Maps a backend name from a CSV to ours: "jit"/"flydsl" -> "jit", "baseline"/"triton" ->
// "baseline" (the imported prefill tables name the FlyDSL and Triton kernels). nullopt: unknown.
std::optional<std::string> normalize_backend(std::string_view name);

// What is wrong with a row (a key_problem, an arch not in canonical spelling, an unknown backend,
// a variant name that does not parse, a non-positive time), or nullopt when it can be stored.
std::optional<std::string> row_problem(const TunedRow& row);
std::optional<std::string> row_problem(const PagedTunedRow& row);
std::optional<std::string> row_problem(const TopkTunedRow& row);

}  // namespace mqajit
