// The unfused path of mqa_topk: the logits of a block of rows into the workspace (mqa_logits'
// kernels, clean_logits=false), then the select kernel over each row's window; repeated until
// every row is done. Memory stays the outputs plus the workspace for any N. The fused path runs it
// too, for the rows its candidates could not serve.

#include <algorithm>

#include "codegen/topk_select.hpp"
#include "core/check.hpp"
#include "core/log.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/mqa_topk_call.hpp"

namespace mqajit {

TensorView rows_of(const TensorView& t, std::int64_t first, std::int64_t count) {
    TensorView part = t;
    part.data = static_cast<char*>(t.data) + first * t.stride(0) * element_size_bytes(t.dtype);
    part.shape[0] = count;
    return part;
}

TensorView workspace_array(const TopkCall& call, std::int64_t offset, std::int64_t count, DType dtype) {
    return TensorView::strided(static_cast<char*>(call.workspace.data) + offset, dtype, {count}, {1});
}

void launch_topk_kernel(const char* kernel_name, LaunchConfig config, const void* params, std::size_t params_bytes,
                        const TopkCall& call) {
    const auto [kernel, device] = Dispatcher::instance().topk_kernel(kernel_name);
    config.programmatic_dependent_launch = call.options.pdl;
    device->launch(*kernel, config, call.options.stream, params, params_bytes);
}

void run_unfused_passes(const TopkCall& call, std::int64_t logits_offset, const std::string& variant,
                        const TensorView& compute_starts, const TensorView& compute_ends, const int* only_rows) {
    const std::int64_t row_stride = mqa_topk_row_bytes(call.seq_len_kv) / 4;
    const std::int64_t rows_that_fit =
        std::min(call.seq_len, (call.workspace.size(0) - logits_offset) / (row_stride * 4));
    MQAJIT_CHECK_KIND(internal, rows_that_fit >= 1, "mqa_topk: no room for a row of logits past workspace byte {}",
                      logits_offset);
    // NOTES: passes of equal size: 4095 rows and then 1 (S = 4096 at N = 32768 in 512 MiB) left the
    // last pass's select one block on one SM, 47 us (H200, 2026-12-05).
    const std::int64_t passes = (call.seq_len + rows_that_fit - 1) / rows_that_fit;
    const std::int64_t rows_per_pass = (call.seq_len + passes - 1) / passes;
    void* const logits_base = static_cast<char*>(call.workspace.data) + logits_offset;
    MqaLogitsOptions logits_options{.clean_logits = false, .stream = call.options.stream, .variant = variant,
                                    .num_sms = call.options.num_sms, .report = nullptr, .pdl = call.options.pdl};
    for (std::int64_t first = 0; first < call.seq_len; first += rows_per_pass) {
        const std::int64_t rows = std::min(rows_per_pass, call.seq_len - first);
        const TensorView logits =
            TensorView::strided(logits_base, DType::float32, {rows, call.seq_len_kv}, {row_stride, 1});
        const TensorView q_rows = rows_of(call.q, first, rows), weights_rows = rows_of(call.weights, first, rows);
        const TensorView starts = rows_of(compute_starts, first, rows), ends = rows_of(compute_ends, first, rows);
        try {
            mqa_logits(q_rows, call.kv, call.kv_scales, weights_rows, starts, ends, logits, logits_options);
        } catch (const Error& e) {
            // As mqa_logits() does for a tuned variant that cannot be built: the baseline serves,
            // here for every pass (nothing has run yet).
            if (logits_options.variant.empty() || logits_options.variant == "baseline" || first > 0) throw;
            log().warn("mqa_topk: variant {} is unavailable, the baseline kernel computes the logits instead: {}",
                       logits_options.variant, e.what());
            logits_options.variant = "baseline";
            mqa_logits(q_rows, call.kv, call.kv_scales, weights_rows, starts, ends, logits, logits_options);
        }
        TopkSelectParams params{};
        params.logits = static_cast<const float*>(logits_base);
        params.cu_starts = static_cast<const int*>(rows_of(call.cu_starts, first, rows).data);
        params.cu_ends = static_cast<const int*>(rows_of(call.cu_ends, first, rows).data);
        params.indices = static_cast<int*>(rows_of(call.indices, first, rows).data);
        params.values =
            call.values.data != nullptr ? static_cast<float*>(rows_of(call.values, first, rows).data) : nullptr;
        params.only_rows = only_rows != nullptr ? only_rows + first : nullptr;
        params.logits_stride = row_stride;
        params.indices_stride = call.indices.stride(0);
        params.values_stride = call.values.data != nullptr ? call.values.stride(0) : 0;
        params.rows = static_cast<int>(rows);
        params.seq_len_kv = static_cast<int>(call.seq_len_kv);
        params.k = call.k;
        params.sort_by_logit = call.options.sorted ? 1 : 0;
        params.capacity = MQA_TOPK_SELECT_CAPACITY(call.k);
        launch_topk_kernel(kTopkSelectKernelName, topk_select_launch_config(rows, call.k), &params, sizeof(params),
                           call);
    }
}

}  // namespace mqajit
