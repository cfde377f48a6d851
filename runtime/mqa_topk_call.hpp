#pragma once
// One checked mqa_topk() call and the two paths that compute it (runtime/mqa_topk*.cpp).

#include <cstdint>
#include <string>

#include "codegen/launch_plan.hpp"
#include "mqajit/mqa_topk.hpp"
#include "runtime/mqa_topk_layout.hpp"
#include "variants/variant.hpp"

namespace mqajit {

struct TopkCall {
    TensorView q, kv, kv_scales, weights, cu_starts, cu_ends;
    TensorView indices, values, workspace;  // values: null data for none
    MqaTopkOptions options;
    int k = 0;
    std::int64_t seq_len = 0, seq_len_kv = 0;
};

// Rows [first, first + count) of a tensor whose dimension 0 is rows.
TensorView rows_of(const TensorView& t, std::int64_t first, std::int64_t count);
// A view of workspace bytes [offset, offset + 4 * count) as `dtype` (int32 or float32) [count].
TensorView workspace_array(const TopkCall& call, std::int64_t offset, std::int64_t count, DType dtype);

// A pre-built mqa_topk kernel (by name) on the current device, with `params` as its argument, on
// `call`'s stream, with its options' programmatic dependent launch.
void launch_topk_kernel(const char* kernel_name, LaunchConfig config, const void* params, std::size_t params_bytes,
                        const TopkCall& call);

// The unfused path over every row, its logits in the workspace from byte `logits_offset` on: per
// block of rows, mqa_logits (clean_logits=false, `variant`: a name, or empty for the table's
// choice) over the windows [compute_starts, compute_ends), then the select kernel over the call's
// windows, for the rows whose only_rows entry is not 0 (only_rows null: every row).
void run_unfused_passes(const TopkCall& call, std::int64_t logits_offset, const std::string& variant,
                        const TensorView& compute_starts, const TensorView& compute_ends, const int* only_rows);

// The fused path: the sample's scores and thresholds, the twgmma kernel `topk_variant` (whose twin
// `logits_variant` computes the same values), the select over the candidates, and the unfused
// passes for the rows whose candidates turned out not to hold their top k.
void run_fused(const TopkCall& call, const FusedTopkLayout& layout, const Variant& topk_variant,
               const Variant& logits_variant);

}  // namespace mqajit
