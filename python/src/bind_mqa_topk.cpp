// mqa_topk() and its workspace size on view tuples; the GIL is released for the call (the first
// call for a shape may compile a kernel).

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "mqajit/mqa_topk.hpp"
#include "python/src/bindings.hpp"
#include "python/src/tensor_views.hpp"

namespace mqajit::python {
namespace {

namespace py = pybind11;
using namespace py::literals;

py::object run_topk(py::handle q, py::handle kv, py::handle kv_scales, py::handle weights, py::handle cu_starts,
                    py::handle cu_ends, py::handle indices, py::handle values, py::handle workspace,
                    bool sorted, std::uintptr_t stream, std::string variant, bool report, int num_sms,
                    const std::string& path, bool pdl) {
    const TensorView q_view = tensor_view_from("q", q), kv_view = tensor_view_from("kv", kv),
                     scales_view = tensor_view_from("kv_scales", kv_scales),
                     weights_view = tensor_view_from("weights", weights),
                     starts_view = tensor_view_from("cu_starts", cu_starts),
                     ends_view = tensor_view_from("cu_ends", cu_ends),
                     indices_view = tensor_view_from("indices", indices),
                     values_view = values.is_none() ? TensorView{} : tensor_view_from("values", values),
                     workspace_view = tensor_view_from("workspace", workspace);
    const MqaTopkPath topk_path = parse_mqa_topk_path(path);
    DispatchReport dispatch_report;
    const MqaTopkOptions options{.stream = reinterpret_cast<void*>(stream),
                                 .sorted = sorted,
                                 .variant = std::move(variant),
                                 .num_sms = num_sms,
                                 .path = topk_path,
                                 .report = report ? &dispatch_report : nullptr,
                                 .pdl = pdl};
    {
        py::gil_scoped_release released;
        mqa_topk(q_view, kv_view, scales_view, weights_view, starts_view, ends_view, indices_view, values_view,
                 workspace_view, options);
    }
    if (!report) return py::none();
    return py::dict("kernel"_a = dispatch_report.kernel, "reason"_a = dispatch_report.reason);
}

constexpr const char* kTopkDoc = R"(Writes each row's top-k keys into `indices` (their logits into `values`), asynchronously on `stream`.

Tensors are (data_ptr, dtype, shape, strides) tuples of device memory: q, kv, kv_scales, weights,
cu_starts, cu_ends as mqa_logits takes them; indices int32 [S, k]; values float32 [S, k] or None;
workspace uint8 [bytes], at least mqa_topk_row_bytes(N) (mqa_topk_workspace_bytes gives a size).
sorted=False: each row's keys in ascending key order; True: by logit, largest first.
`variant` names the mqa_logits kernel computing the scores ("": the tuned table). path: "auto"
(the fused path where it is available and expected to win), "fused" (or an error saying why it
cannot serve) or "unfused". With
report=True, returns {"kernel": ..., "reason": ...}. Bad input raises ValueError before anything is launched.)";

}  // namespace

void bind_mqa_topk(py::module_& module) {
    module.def("mqa_topk", &run_topk, "q"_a, "kv"_a, "kv_scales"_a, "weights"_a, "cu_starts"_a, "cu_ends"_a,
               "indices"_a, "values"_a, "workspace"_a, py::kw_only(), "sorted"_a = false, "stream"_a = 0, "variant"_a = "",
               "report"_a = false, "num_sms"_a = 0, "path"_a = "auto", "pdl"_a = false, kTopkDoc);
    module.def("mqa_topk_row_bytes", &mqa_topk_row_bytes, "seq_len_kv"_a,
               "Bytes of float32 logits one row takes in mqa_topk's workspace.");
    module.def("mqa_topk_workspace_bytes", &mqa_topk_workspace_bytes, "seq_len"_a, "seq_len_kv"_a, "k"_a,
               "max_bytes"_a = std::int64_t{512} << 20,
               "The workspace for S rows over N keys selecting k: the fused path's fixed part where it fits in "
               "max_bytes, then as many rows of logits as fit (at least one row, at most S).");
}

}  // namespace mqajit::python
