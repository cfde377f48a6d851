// mqa_logits() and mqa_logits_reference() on view tuples. The GIL is released for the call: the
// first call for a shape may compile a kernel, and other Python threads should run meanwhile.

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "mqajit/mqa_logits.hpp"
#include "python/src/bindings.hpp"
#include "python/src/tensor_views.hpp"

namespace mqajit::python {
namespace {

namespace py = pybind11;
using namespace py::literals;

struct Views {
    TensorView q, kv, kv_scales, weights, cu_starts, cu_ends, logits;
};

Views views_from(py::handle q, py::handle kv, py::handle kv_scales, py::handle weights, py::handle cu_starts,
                 py::handle cu_ends, py::handle logits) {
    return Views{.q = tensor_view_from("q", q),
                 .kv = tensor_view_from("kv", kv),
                 .kv_scales = tensor_view_from("kv_scales", kv_scales),
                 .weights = tensor_view_from("weights", weights),
                 .cu_starts = tensor_view_from("cu_starts", cu_starts),
                 .cu_ends = tensor_view_from("cu_ends", cu_ends),
                 .logits = tensor_view_from("logits", logits)};
}

py::object run_mqa_logits(py::handle q, py::handle kv, py::handle kv_scales, py::handle weights, py::handle cu_starts,
                          py::handle cu_ends, py::handle logits, bool clean_logits, std::uintptr_t stream,
                          std::string variant, bool report, int max_seqlen_k, int num_sms, bool pdl) {
    const Views views = views_from(q, kv, kv_scales, weights, cu_starts, cu_ends, logits);
    DispatchReport dispatch_report;
    const MqaLogitsOptions options{.clean_logits = clean_logits,
                                   .stream = reinterpret_cast<void*>(stream),
                                   .variant = std::move(variant),
                                   .num_sms = num_sms,
                                   .max_seqlen_k = max_seqlen_k,
                                   .report = report ? &dispatch_report : nullptr,
                                   .pdl = pdl};
    {
        py::gil_scoped_release released;
        mqa_logits(views.q, views.kv, views.kv_scales, views.weights, views.cu_starts, views.cu_ends, views.logits,
                   options);
    }
    if (!report) return py::none();
    return py::dict("kernel"_a = dispatch_report.kernel, "reason"_a = dispatch_report.reason);
}

void run_reference(py::handle q, py::handle kv, py::handle kv_scales, py::handle weights, py::handle cu_starts,
                   py::handle cu_ends, py::handle logits, bool clean_logits, std::uintptr_t stream,
                   int max_seqlen_k) {
    const Views views = views_from(q, kv, kv_scales, weights, cu_starts, cu_ends, logits);
    py::gil_scoped_release released;
    mqa_logits_reference(views.q, views.kv, views.kv_scales, views.weights, views.cu_starts, views.cu_ends,
                         views.logits, clean_logits, reinterpret_cast<void*>(stream), max_seqlen_k);
}

constexpr const char* kMqaLogitsDoc = R"(Computes MQA logits into `logits`, asynchronously on `stream`.

Each tensor is a (data_ptr, dtype, shape, strides) tuple of device memory in the current CUDA
context (strides in elements; dtype "float8_e4m3", "float32", "int32" or "bfloat16"). `stream` is
a CUstream as an int (0: the legacy default stream). `variant`: "" lets the tuning table decide,
"baseline" picks the pre-built kernel, anything else names a variant. `max_seqlen_k` and `num_sms`
are MqaLogitsOptions' (0: dense rows, all SMs). With report=True, returns
{"kernel": ..., "reason": ...} saying what served the call; otherwise None.
Bad input raises ValueError before anything is launched.)";

}  // namespace

void bind_mqa_logits(py::module_& module) {
    module.def("mqa_logits", &run_mqa_logits, "q"_a, "kv"_a, "kv_scales"_a, "weights"_a, "cu_starts"_a, "cu_ends"_a,
               "logits"_a, py::kw_only(), "clean_logits"_a = true, "stream"_a = 0, "variant"_a = "",
               "report"_a = false, "max_seqlen_k"_a = 0, "num_sms"_a = 0, "pdl"_a = false, kMqaLogitsDoc);
    module.def("mqa_logits_reference", &run_reference, "q"_a, "kv"_a, "kv_scales"_a, "weights"_a, "cu_starts"_a,
               "cu_ends"_a, "logits"_a, py::kw_only(), "clean_logits"_a = true, "stream"_a = 0, "max_seqlen_k"_a = 0,
               "The same operator from the slow fp32 reference kernel, for checking results.");
}

}  // namespace mqajit::python
