// The fused path of mqa_topk (codegen/templates/topk_fused.cuh has the why of each step):
// sample -> its scores (mqa_logits over the sample keys) -> thresholds -> the twgmma kernel keeping
// candidates -> the exact select over them -> the unfused passes for the rows it could not serve
// (launched always: whether any row failed is in device memory, and nothing here reads it).

#include <algorithm>

#include "codegen/topk_fused.hpp"
#include "core/check.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/mqa_logits_args.hpp"
#include "runtime/mqa_topk_call.hpp"

namespace mqajit {
namespace {

template <class T>
T* workspace_at(const TopkCall& call, std::int64_t offset) {
    return reinterpret_cast<T*>(static_cast<char*>(call.workspace.data) + offset);
}

TopkFusedParams fused_params(const TopkCall& call, const FusedTopkLayout& layout) {
    TopkFusedParams p{};
    p.kv = static_cast<const unsigned char*>(call.kv.data);
    p.kv_scales = static_cast<const float*>(call.kv_scales.data);
    p.cu_starts = static_cast<const int*>(call.cu_starts.data);
    p.cu_ends = static_cast<const int*>(call.cu_ends.data);
    p.kv_stride = call.kv.stride(0);
    p.rows = static_cast<int>(call.seq_len);
    p.seq_len_kv = static_cast<int>(call.seq_len_kv);
    p.head_dim = static_cast<int>(call.kv.size(1));
    p.k = call.k;
    p.capacity = layout.capacity;
    p.sample_stride = layout.sample_stride;
    p.sample_len = static_cast<int>(layout.sample_len);
    p.oversample = layout.oversample;
    p.sample_kv = workspace_at<unsigned char>(call, layout.sample_kv);
    p.sample_scales = workspace_at<float>(call, layout.sample_scales);
    p.sample_starts = workspace_at<int>(call, layout.sample_starts);
    p.sample_ends = workspace_at<int>(call, layout.sample_ends);
    p.thresholds = workspace_at<float>(call, layout.thresholds);
    p.counts = workspace_at<int>(call, layout.counts);
    p.candidate_keys = workspace_at<int>(call, layout.candidate_keys);
    p.candidate_values = workspace_at<float>(call, layout.candidate_values);
    p.failed = workspace_at<int>(call, layout.failed);
    p.fallback_starts = workspace_at<int>(call, layout.fallback_starts);
    p.fallback_ends = workspace_at<int>(call, layout.fallback_ends);
    p.indices = static_cast<int*>(call.indices.data);
    p.values = call.values.data != nullptr ? static_cast<float*>(call.values.data) : nullptr;
    p.indices_stride = call.indices.stride(0);
    p.values_stride = call.values.data != nullptr ? call.values.stride(0) : 0;
    p.sort_by_logit = call.options.sorted ? 1 : 0;
    return p;
}

// Rows [first, first + rows) of the per-row pointers.
TopkFusedParams for_rows(TopkFusedParams p, std::int64_t first, std::int64_t rows) {
    p.cu_starts += first;
    p.cu_ends += first;
    p.sample_starts += first;
    p.sample_ends += first;
    p.thresholds += first;
    p.counts += first;
    p.rows = static_cast<int>(rows);
    return p;
}

// The sample's scores, block of rows by block of rows, each followed by its rows' thresholds. A
// call whose windows all fit the candidate buffer needs no scores: every threshold is -inf.
void find_thresholds(const TopkCall& call, const FusedTopkLayout& layout, const TopkFusedParams& p) {
    void* const stream = call.options.stream;
    if (call.seq_len_kv <= layout.capacity) {
        launch_topk_kernel(kTopkThresholdsKernelName, topk_thresholds_launch_config(call.seq_len), &p, sizeof(p),
                           call);
        return;
    }
    launch_topk_kernel(kTopkSampleKernelName, topk_sample_launch_config(layout.sample_len, p.head_dim, call.seq_len),
                       &p, sizeof(p), call);
    const std::int64_t head_dim = p.head_dim;
    const TensorView sample_kv =
        TensorView::strided(p.sample_kv, DType::float8_e4m3, {layout.sample_len, head_dim}, {head_dim, 1});
    const TensorView sample_scales = workspace_array(call, layout.sample_scales, layout.sample_len, DType::float32);
    const TensorView sample_starts = workspace_array(call, layout.sample_starts, call.seq_len, DType::int32);
    const TensorView sample_ends = workspace_array(call, layout.sample_ends, call.seq_len, DType::int32);
    const std::int64_t row_stride = (layout.sample_len + 3) / 4 * 4;
    const std::int64_t rows_per_pass =
        std::clamp<std::int64_t>((call.workspace.size(0) - layout.logits) / (4 * row_stride), 1, call.seq_len);
    float* const scores = workspace_at<float>(call, layout.logits);
    const MqaLogitsOptions options{
        .clean_logits = false, .stream = stream, .num_sms = call.options.num_sms, .pdl = call.options.pdl};
    for (std::int64_t first = 0; first < call.seq_len; first += rows_per_pass) {
        const std::int64_t rows = std::min(rows_per_pass, call.seq_len - first);
        const TensorView logits =
            TensorView::strided(scores, DType::float32, {rows, layout.sample_len}, {row_stride, 1});
        mqa_logits(rows_of(call.q, first, rows), sample_kv, sample_scales, rows_of(call.weights, first, rows),
                   rows_of(sample_starts, first, rows), rows_of(sample_ends, first, rows), logits, options);
        TopkFusedParams block = for_rows(p, first, rows);
        block.sample_logits = scores;
        block.sample_logits_stride = row_stride;
        launch_topk_kernel(kTopkThresholdsKernelName, topk_thresholds_launch_config(rows), &block, sizeof(block),
                           call);
    }
}

}  // namespace

void run_fused(const TopkCall& call, const FusedTopkLayout& layout, const Variant& topk_variant,
               const Variant& logits_variant) {
    const TopkFusedParams p = fused_params(call, layout);
    find_thresholds(call, layout, p);

    const std::int64_t row_stride = mqa_topk_row_bytes(call.seq_len_kv) / 4;
    const TensorView unused_logits = TensorView::strided(workspace_at<float>(call, layout.logits), DType::float32,
                                                         {call.seq_len, call.seq_len_kv}, {row_stride, 1});
    MqaLogitsArgs args = make_mqa_logits_args(call.q, call.kv, call.kv_scales, call.weights, call.cu_starts,
                                              call.cu_ends, unused_logits, false);
    args.shape.num_sms = call.options.num_sms;
    args.params.logits = nullptr;
    args.params.topk_thresholds = p.thresholds;
    args.params.topk_counts = p.counts;
    args.params.topk_keys = workspace_at<int>(call, layout.candidate_keys);
    args.params.topk_values = workspace_at<float>(call, layout.candidate_values);
    args.params.topk_capacity = layout.capacity;
    Dispatcher::instance().run_topk_variant(topk_variant, args, call.options.stream, call.options.pdl);

    launch_topk_kernel(kTopkCandidatesKernelName, topk_candidates_launch_config(call.seq_len, call.k, layout.capacity), &p,
                       sizeof(p), call);

    run_unfused_passes(call, layout.logits, logits_variant.name(),
                       workspace_array(call, layout.fallback_starts, call.seq_len, DType::int32),
                       workspace_array(call, layout.fallback_ends, call.seq_len, DType::int32), p.failed);
}

}  // namespace mqajit
