// lookup() and explain(): the tuning table's answer for a shape, as `mqajit db lookup` gives it.
// Rows become dicts whose keys are the table's column names (ShapeKey::visit, TunedRow::visit_values).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "core/check.hpp"
#include "python/src/bindings.hpp"
#include "tuning_db/tuning_db.hpp"
#include "variants/arch.hpp"

namespace mqajit::python {
namespace {

namespace py = pybind11;
using namespace py::literals;

ShapeKey shape_key(const std::string& arch, int cu_num, int heads, int head_dim, std::int64_t seq_len,
                   std::int64_t seq_len_kv, bool clean_logits) {
    ShapeKey key{.arch = Arch::parse(arch).name, .cu_num = cu_num, .heads = heads, .head_dim = head_dim,
                 .clean_logits = clean_logits ? 1 : 0, .seq_len = seq_len, .seq_len_kv = seq_len_kv};
    const auto problem = key_problem(key);
    MQAJIT_CHECK(!problem, "{}; every size of a shape must be positive", problem.value_or(""));
    return key;
}


py::dict shape_dict(const ShapeKey& key) {
    py::dict dict;
    key.visit([&](std::string_view column, const auto& value) {
        dict[py::str(column.data(), column.size())] = py::cast(value);
    });
    return dict;
}

py::object row_object(const TunedRow* row) {
    if (row == nullptr) return py::none();
    py::dict dict = shape_dict(row->key);
    row->visit_values([&](std::string_view column, const auto& value) {
        dict[py::str(column.data(), column.size())] = py::cast(value);
    });
    dict["origin"] = row->origin;
    return dict;
}

py::object lookup(const std::string& arch, int cu_num, int heads, int head_dim, std::int64_t seq_len,
                  std::int64_t seq_len_kv, bool clean_logits) {
    const ShapeKey key = shape_key(arch, cu_num, heads, head_dim, seq_len, seq_len_kv, clean_logits);
    return row_object(TuningDb::instance().lookup(key));
}

py::dict explain(const std::string& arch, int cu_num, int heads, int head_dim, std::int64_t seq_len,
                 std::int64_t seq_len_kv, bool clean_logits) {
    const ShapeKey key = shape_key(arch, cu_num, heads, head_dim, seq_len, seq_len_kv, clean_logits);
    const TuningDb& database = TuningDb::instance();
    const LookupResult result = database.explain(key);
    const TunedRow* row = result.row ? &*result.row : nullptr;
    const auto system_db = database.system_db_path();
    return py::dict("shape"_a = shape_dict(key), "kernel"_a = row ? row->variant : std::string(kBackendBaseline),
                    "row"_a = row_object(row), "steps"_a = result.steps, "fallbacks"_a = result.fallbacks,
                    "system_db"_a = system_db ? py::object(py::str(system_db->string())) : py::object(py::none()),
                    "user_db"_a = database.user_db_path().string());
}

}  // namespace

void bind_tuning(py::module_& module) {
    module.def("canonical_arch", [](const std::string& arch) { return Arch::parse(arch).name; }, "arch"_a,
               "The arch name as mqajit spells it (\"sm90a\" -> \"sm_90a\"); ValueError for an unknown arch.");
    module.def("lookup", &lookup, py::kw_only(), "arch"_a, "cu_num"_a, "heads"_a, "head_dim"_a, "seq_len"_a,
               "seq_len_kv"_a, "clean_logits"_a,
               "The tuned row (a dict of the table's columns plus 'origin') that serves the shape in that "
               "clean_logits mode, or None when the baseline kernel does.");
    module.def("explain", &explain, py::kw_only(), "arch"_a, "cu_num"_a, "heads"_a, "head_dim"_a, "seq_len"_a,
               "seq_len_kv"_a, "clean_logits"_a,
               "The lookup with its reasoning: {'shape', 'kernel', 'row', 'steps', 'fallbacks', 'system_db', "
               "'user_db'}.");
}

}  // namespace mqajit::python
