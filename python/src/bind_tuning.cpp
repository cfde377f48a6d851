// lookup() and explain(): the tuning table's answer for a shape, as `mqajit db lookup` gives it,
// for each operator's table (paged_lookup/paged_explain: paged_mqa_logits; topk_lookup/
// topk_table_explain: mqa_topk); topk_explain: which path and kernels an mqa_topk call takes.
// Rows become dicts whose keys are the table's column names (the key's columns,
// TunedRowOf::visit_values).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "core/check.hpp"
#include "mqajit/mqa_topk.hpp"
#include "runtime/mqa_topk_path.hpp"
#include "python/src/bindings.hpp"
#include "tuning_db/tuning_db.hpp"
#include "variants/arch.hpp"

namespace mqajit::python {
namespace {

namespace py = pybind11;
using namespace py::literals;

template <class Key>
Key checked(Key key) {
    key.arch = Arch::parse(key.arch).name;
    const auto problem = key_problem(key);
    MQAJIT_CHECK(!problem, "{}", problem.value_or(""));
    return key;
}

ShapeKey shape_key(const std::string& arch, int cu_num, int heads, int head_dim, std::int64_t seq_len,
                   std::int64_t seq_len_kv, bool clean_logits, const std::string& logits_dtype) {
    return checked(ShapeKey{.arch = arch, .cu_num = cu_num, .heads = heads, .head_dim = head_dim,
                            .clean_logits = clean_logits ? 1 : 0, .logits_dtype = logits_dtype, .seq_len = seq_len,
                            .seq_len_kv = seq_len_kv});
}

PagedShapeKey paged_key(const std::string& arch, int cu_num, int next_n, int heads, int head_dim, int block_kv,
                        std::int64_t batch, bool clean_logits) {
    return checked(PagedShapeKey{.arch = arch, .cu_num = cu_num, .next_n = next_n, .heads = heads,
                                 .head_dim = head_dim, .block_kv = block_kv, .clean_logits = clean_logits ? 1 : 0,
                                 .batch = batch});
}

TopkShapeKey topk_key(const std::string& arch, int cu_num, int heads, int head_dim, int k, std::int64_t seq_len,
                      std::int64_t seq_len_kv) {
    return checked(TopkShapeKey{.arch = arch, .cu_num = cu_num, .heads = heads, .head_dim = head_dim, .k = k,
                                .seq_len = seq_len, .seq_len_kv = seq_len_kv});
}

template <class Key>
py::dict shape_dict(const Key& key) {
    py::dict dict;
    key.visit([&](std::string_view column, const auto& value) {
        dict[py::str(column.data(), column.size())] = py::cast(value);
    });
    return dict;
}

template <class Key>
py::object row_object(const TunedRowOf<Key>* row) {
    if (row == nullptr) return py::none();
    py::dict dict = shape_dict(row->key);
    row->visit_values([&](std::string_view column, const auto& value) {
        dict[py::str(column.data(), column.size())] = py::cast(value);
    });
    dict["origin"] = row->origin;
    return dict;
}

template <class Key>
py::dict explanation(const Key& key) {
    const TuningDb& database = TuningDb::instance();
    const LookupResultOf<Key> result = database.explain(key);
    const TunedRowOf<Key>* row = result.row ? &*result.row : nullptr;
    const auto system_db = database.system_db_path();
    return py::dict("op"_a = std::string(Key::kOp.name), "shape"_a = shape_dict(key),
                    "kernel"_a = row ? row->variant : std::string(kBackendBaseline), "row"_a = row_object(row),
                    "steps"_a = result.steps, "fallbacks"_a = result.fallbacks,
                    "system_db"_a = system_db ? py::object(py::str(system_db->string())) : py::object(py::none()),
                    "user_db"_a = database.user_db_path().string());
}

py::object lookup(const std::string& arch, int cu_num, int heads, int head_dim, std::int64_t seq_len,
                  std::int64_t seq_len_kv, bool clean_logits, const std::string& logits_dtype) {
    return row_object(TuningDb::instance().lookup(shape_key(arch, cu_num, heads, head_dim, seq_len, seq_len_kv,
                                                            clean_logits, logits_dtype)));
}

py::dict explain(const std::string& arch, int cu_num, int heads, int head_dim, std::int64_t seq_len,
                 std::int64_t seq_len_kv, bool clean_logits, const std::string& logits_dtype) {
    return explanation(shape_key(arch, cu_num, heads, head_dim, seq_len, seq_len_kv, clean_logits, logits_dtype));
}

py::object paged_lookup(const std::string& arch, int cu_num, int next_n, int heads, int head_dim, int block_kv,
                        std::int64_t batch, bool clean_logits) {
    return row_object(TuningDb::instance().lookup(paged_key(arch, cu_num, next_n, heads, head_dim, block_kv, batch,
                                                            clean_logits)));
}

py::dict paged_explain(const std::string& arch, int cu_num, int next_n, int heads, int head_dim, int block_kv,
                       std::int64_t batch, bool clean_logits) {
    return explanation(paged_key(arch, cu_num, next_n, heads, head_dim, block_kv, batch, clean_logits));
}

py::object topk_lookup(const std::string& arch, int cu_num, int heads, int head_dim, int k, std::int64_t seq_len,
                       std::int64_t seq_len_kv) {
    return row_object(TuningDb::instance().lookup(topk_key(arch, cu_num, heads, head_dim, k, seq_len, seq_len_kv)));
}

py::dict topk_table_explain(const std::string& arch, int cu_num, int heads, int head_dim, int k, std::int64_t seq_len,
                            std::int64_t seq_len_kv) {
    return explanation(topk_key(arch, cu_num, heads, head_dim, k, seq_len, seq_len_kv));
}

// Which path and kernels would serve an mqa_topk call (runtime/mqa_topk_path.hpp: the call's own
// choice), with the two lookups it may rest on: the mqa_topk table's and the mqa_logits one
// (clean_logits=False) that serves when the first has no row.
py::dict topk_explain(const std::string& arch, int cu_num, int heads, int head_dim, std::int64_t seq_len,
                      std::int64_t seq_len_kv, int k, std::int64_t workspace_bytes, const std::string& path) {
    const TopkShapeKey table_key = topk_key(arch, cu_num, heads, head_dim, k, seq_len, seq_len_kv);
    const ShapeKey logits_key = shape_key(arch, cu_num, heads, head_dim, seq_len, seq_len_kv, false, "float32");
    if (workspace_bytes <= 0) workspace_bytes = mqa_topk_workspace_bytes(seq_len, seq_len_kv, k);
    const Arch parsed = Arch::parse(arch);
    const TopkChoice choice =
        choose_topk(TuningDb::instance(),
                    {.arch = parsed, .cu_num = cu_num, .heads = heads, .head_dim = head_dim, .seq_len = seq_len,
                     .seq_len_kv = seq_len_kv, .k = k, .workspace_bytes = workspace_bytes, .kv_rows_aligned = true,
                     .path = parse_mqa_topk_path(path), .variant = {},
                     .device = fmt::format("{} with {} SMs", parsed.name, cu_num)});
    const std::string logits_kernel = choice.logits.variant ? choice.logits.variant->name() : "baseline";
    return py::dict("path"_a = choice.fused ? "fused" : "unfused",
                    "kernel"_a = choice.fused ? choice.topk_variant->name() : logits_kernel,
                    "logits_kernel"_a = logits_kernel,
                    "reason"_a = fmt::format("{}; logits: {}", choice.reason, choice.logits.reason),
                    "workspace_bytes"_a = workspace_bytes, "table"_a = explanation(table_key),
                    "logits"_a = explanation(logits_key));
}

}  // namespace

void bind_tuning(py::module_& module) {
    module.def("canonical_arch", [](const std::string& arch) { return Arch::parse(arch).name; }, "arch"_a,
               "The arch name as mqajit spells it (\"sm90a\" -> \"sm_90a\"); ValueError for an unknown arch.");
    module.def("lookup", &lookup, py::kw_only(), "arch"_a, "cu_num"_a, "heads"_a, "head_dim"_a, "seq_len"_a,
               "seq_len_kv"_a, "clean_logits"_a, "logits_dtype"_a = "float32",
               "The tuned mqa_logits row (a dict of the table's columns plus 'origin') that serves the shape in "
               "that clean_logits mode and logits dtype (float32 or bfloat16), or None when the baseline kernel does.");
    module.def("topk_explain", &topk_explain, py::kw_only(), "arch"_a, "cu_num"_a, "heads"_a, "head_dim"_a,
               "seq_len"_a, "seq_len_kv"_a, "k"_a, "workspace_bytes"_a = 0, "path"_a = "auto",
               "Which path (fused or unfused) and kernel would serve an mqa_topk call, and why; workspace_bytes 0: "
               "mqa_topk_workspace_bytes()'s default.");
    module.def("explain", &explain, py::kw_only(), "arch"_a, "cu_num"_a, "heads"_a, "head_dim"_a, "seq_len"_a,
               "seq_len_kv"_a, "clean_logits"_a, "logits_dtype"_a = "float32",
               "The lookup with its reasoning: {'op', 'shape', 'kernel', 'row', 'steps', 'fallbacks', "
               "'system_db', 'user_db'}.");
    module.def("paged_lookup", &paged_lookup, py::kw_only(), "arch"_a, "cu_num"_a, "next_n"_a, "heads"_a,
               "head_dim"_a, "block_kv"_a, "batch"_a, "clean_logits"_a,
               "The tuned paged_mqa_logits row that serves the decode shape, or None for the baseline kernel.");
    module.def("topk_lookup", &topk_lookup, py::kw_only(), "arch"_a, "cu_num"_a, "heads"_a, "head_dim"_a, "k"_a,
               "seq_len"_a, "seq_len_kv"_a,
               "The tuned mqa_topk row that serves the shape, or None when none does (then the mqa_logits table's "
               "choice and the path rule serve).");
    module.def("topk_table_explain", &topk_table_explain, py::kw_only(), "arch"_a, "cu_num"_a, "heads"_a,
               "head_dim"_a, "k"_a, "seq_len"_a, "seq_len_kv"_a, "topk_lookup with its reasoning, like explain().");
    module.def("paged_explain", &paged_explain, py::kw_only(), "arch"_a, "cu_num"_a, "next_n"_a, "heads"_a,
               "head_dim"_a, "block_kv"_a, "batch"_a, "clean_logits"_a,
               "paged_lookup with its reasoning, like explain().");
}

}  // namespace mqajit::python
