// paged_mqa_logits() and paged_mqa_logits_reference() on view tuples; the GIL is released for the
// call (the first call for a shape may compile a kernel).

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "mqajit/paged_mqa_logits.hpp"
#include "python/src/bindings.hpp"
#include "python/src/tensor_views.hpp"

namespace mqajit::python {
namespace {

namespace py = pybind11;
using namespace py::literals;

struct PagedViews {
    TensorView q, kv_cache, weights, context_lens, block_table, logits;
};

PagedViews paged_views_from(py::handle q, py::handle kv_cache, py::handle weights, py::handle context_lens,
                            py::handle block_table, py::handle logits) {
    return PagedViews{.q = tensor_view_from("q", q),
                      .kv_cache = tensor_view_from("kv_cache", kv_cache),
                      .weights = tensor_view_from("weights", weights),
                      .context_lens = tensor_view_from("context_lens", context_lens),
                      .block_table = tensor_view_from("block_table", block_table),
                      .logits = tensor_view_from("logits", logits)};
}

py::object run_paged(py::handle q, py::handle kv_cache, py::handle weights, py::handle context_lens,
                     py::handle block_table, py::handle logits, bool clean_logits, std::uintptr_t stream,
                     std::string variant, bool report, int num_sms, bool pdl) {
    const PagedViews v = paged_views_from(q, kv_cache, weights, context_lens, block_table, logits);
    DispatchReport dispatch_report;
    const PagedMqaLogitsOptions options{.clean_logits = clean_logits,
                                        .stream = reinterpret_cast<void*>(stream),
                                        .variant = std::move(variant),
                                        .num_sms = num_sms,
                                        .report = report ? &dispatch_report : nullptr,
                                        .pdl = pdl};
    {
        py::gil_scoped_release released;
        paged_mqa_logits(v.q, v.kv_cache, v.weights, v.context_lens, v.block_table, v.logits, options);
    }
    if (!report) return py::none();
    return py::dict("kernel"_a = dispatch_report.kernel, "reason"_a = dispatch_report.reason);
}

void run_paged_reference(py::handle q, py::handle kv_cache, py::handle weights, py::handle context_lens,
                         py::handle block_table, py::handle logits, bool clean_logits, std::uintptr_t stream) {
    const PagedViews v = paged_views_from(q, kv_cache, weights, context_lens, block_table, logits);
    py::gil_scoped_release released;
    paged_mqa_logits_reference(v.q, v.kv_cache, v.weights, v.context_lens, v.block_table, v.logits, clean_logits,
                               reinterpret_cast<void*>(stream));
}

constexpr const char* kPagedDoc = R"(Computes decode logits over a paged KV cache into `logits`, asynchronously on `stream`.

Tensors are (data_ptr, dtype, shape, strides) tuples of device memory: q float8_e4m3
[B, next_n, H, D], kv_cache uint8 [num_blocks, block_kv, 1, D + 4], weights float32
[B * next_n, H], context_lens int32 [B] or [B, next_n], block_table int32 [B, max_blocks], logits
float32 [B * next_n, max_context_len]. `variant`: "" lets the decode tuning table decide,
"baseline" picks the pre-built kernel, anything else names a pwgmma or pmfma variant. With report=True,
returns {"kernel": ..., "reason": ...}. Bad input raises ValueError before anything is launched.)";

}  // namespace

void bind_paged_mqa_logits(py::module_& module) {
    module.def("paged_mqa_logits", &run_paged, "q"_a, "kv_cache"_a, "weights"_a, "context_lens"_a, "block_table"_a,
               "logits"_a, py::kw_only(), "clean_logits"_a = false, "stream"_a = 0, "variant"_a = "",
               "report"_a = false, "num_sms"_a = 0, "pdl"_a = false, kPagedDoc);
    module.def("paged_mqa_logits_reference", &run_paged_reference, "q"_a, "kv_cache"_a, "weights"_a,
               "context_lens"_a, "block_table"_a, "logits"_a, py::kw_only(), "clean_logits"_a = false,
               "stream"_a = 0, "The same operator from the slow fp32 reference kernel, for checking results.");
}

}  // namespace mqajit::python
