#include "mqajit/mqa_topk.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "codegen/topk_select.hpp"
#include "core/check.hpp"
#include "core/log.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/device.hpp"
#include "runtime/mqa_logits_args.hpp"
#include "runtime/mqa_topk_call.hpp"
#include "runtime/mqa_topk_path.hpp"
#include "runtime/tensor_checks.hpp"
#include "tuning_db/tuning_db.hpp"

// mqa_topk(): checks the call, picks the variant whose values it selects by, and the path (the
// fused one where it is available and expected to win, runtime/mqa_topk_fused.cpp; otherwise the
// unfused one, runtime/mqa_topk_unfused.cpp).

namespace mqajit {

static_assert(kMqaTopkMaxK == kTopkMaxK, "the public limit on k is the select kernel's");

namespace {

// indices int32 [S, k] (values float32 [S, k] when given) and the workspace, before anything launches.
int check_outputs(const TensorView& indices, const TensorView& values, const TensorView& workspace,
                  std::int64_t seq_len, std::int64_t seq_len_kv) {
    check_tensor(indices, "indices", DType::int32, 2, "[S, k]");
    const std::int64_t k = indices.size(1);
    MQAJIT_CHECK(k <= kMqaTopkMaxK, "indices is {}: k is {}, and mqa_topk selects at most {} keys a row",
                 indices.describe(), k, kMqaTopkMaxK);
    check_size(indices, "indices", 0, seq_len, "S from q");
    MQAJIT_CHECK(indices.stride(1) == 1 && indices.stride(0) >= k,
                 "indices is {}: k must be dense and rows must not overlap (row stride >= k)", indices.describe());
    MQAJIT_CHECK(reinterpret_cast<std::uintptr_t>(indices.data) % 4 == 0, "indices must be 4-byte aligned (got {})",
                 indices.data);
    if (values.data != nullptr) {
        check_tensor(values, "values", DType::float32, 2, "[S, k]");
        check_size(values, "values", 0, seq_len, "S from q");
        check_size(values, "values", 1, k, "k from indices");
        MQAJIT_CHECK(values.stride(1) == 1 && values.stride(0) >= k,
                     "values is {}: k must be dense and rows must not overlap (row stride >= k)", values.describe());
        MQAJIT_CHECK(reinterpret_cast<std::uintptr_t>(values.data) % 4 == 0, "values must be 4-byte aligned (got {})",
                     values.data);
    }
    // Any size mqa_topk_workspace_bytes() gives: the workspace is addressed in int64 throughout.
    check_tensor(workspace, "workspace", DType::uint8, 1, "[bytes]", std::int64_t{1} << 62);
    MQAJIT_CHECK(workspace.stride(0) == 1, "workspace is {}: it must be dense", workspace.describe());
    MQAJIT_CHECK(reinterpret_cast<std::uintptr_t>(workspace.data) % 16 == 0,
                 "workspace must start on a 16-byte boundary");
    MQAJIT_CHECK(workspace.size(0) >= mqa_topk_row_bytes(seq_len_kv),
                 "workspace holds {} bytes; one row of logits over N = {} keys needs {} "
                 "(mqa_topk_workspace_bytes() gives a size)",
                 workspace.size(0), seq_len_kv, mqa_topk_row_bytes(seq_len_kv));
    return static_cast<int>(k);
}

}  // namespace

std::int64_t mqa_topk_row_bytes(std::int64_t seq_len_kv) {
    MQAJIT_CHECK(seq_len_kv >= 1 && seq_len_kv <= kMaxIndex, "seq_len_kv is {}; it must be 1 to {}", seq_len_kv,
                 kMaxIndex);
    return (seq_len_kv + 3) / 4 * 4 * 4;
}

std::int64_t mqa_topk_workspace_bytes(std::int64_t seq_len, std::int64_t seq_len_kv, int k, std::int64_t max_bytes) {
    MQAJIT_CHECK(seq_len >= 1 && seq_len <= kMaxIndex, "seq_len is {}; it must be 1 to {}", seq_len, kMaxIndex);
    MQAJIT_CHECK(k >= 1 && k <= kMqaTopkMaxK, "k is {}; mqa_topk selects 1 to {} keys a row (at most {} keys)", k,
                 kMqaTopkMaxK, kMqaTopkMaxK);
    const std::int64_t row_bytes = mqa_topk_row_bytes(seq_len_kv);
    const std::int64_t fixed = fused_topk_layout(seq_len, seq_len_kv, k).logits;
    if (fixed + row_bytes <= max_bytes) return fixed + std::clamp<std::int64_t>((max_bytes - fixed) / row_bytes, 1, seq_len) * row_bytes;
    return std::clamp<std::int64_t>(max_bytes / row_bytes, 1, seq_len) * row_bytes;
}

void mqa_topk(const TensorView& q_in, const TensorView& kv_in, const TensorView& kv_scales_in,
              const TensorView& weights_in, const TensorView& cu_starts_in, const TensorView& cu_ends_in,
              const TensorView& indices_in, const TensorView& values_in, const TensorView& workspace,
              const MqaTopkOptions& options) {
    const TensorView q = with_dense_unit_strides(q_in), kv = with_dense_unit_strides(kv_in);
    const TensorView kv_scales = with_dense_unit_strides(kv_scales_in), weights = with_dense_unit_strides(weights_in);
    const TensorView cu_starts = with_dense_unit_strides(cu_starts_in), cu_ends = with_dense_unit_strides(cu_ends_in);
    const TensorView indices = with_dense_unit_strides(indices_in), values = with_dense_unit_strides(values_in);
    MQAJIT_CHECK(options.num_sms >= 0, "options.num_sms must be 0 (all) or a positive count; got {}", options.num_sms);
    check_tensor(q, "q", DType::float8_e4m3, 3, "[S, H, D]");
    check_tensor(kv, "kv", DType::float8_e4m3, 2, "[N, D]");
    TopkCall call{.q = q, .kv = kv, .kv_scales = kv_scales, .weights = weights, .cu_starts = cu_starts,
                  .cu_ends = cu_ends, .indices = indices, .values = values, .workspace = workspace,
                  .options = options, .k = 0, .seq_len = q.size(0), .seq_len_kv = kv.size(0)};
    call.k = check_outputs(indices, values, workspace, call.seq_len, call.seq_len_kv);
    // Every operand checked for the whole call before anything launches.
    const std::int64_t row_stride = mqa_topk_row_bytes(call.seq_len_kv) / 4;
    const TensorView whole_logits = TensorView::strided(workspace.data, DType::float32,
                                                        {call.seq_len, call.seq_len_kv}, {row_stride, 1});
    MqaLogitsArgs whole = make_mqa_logits_args(q, kv, kv_scales, weights, cu_starts, cu_ends, whole_logits, false);
    whole.shape.num_sms = options.num_sms;
    // After the operands' own checks (the [S, N] view of the scores above is not checked: it is never
    // written, and may reach past a small workspace).
    using Named = std::pair<const TensorView*, const char*>;
    const Named named_q{&q, "q"}, named_kv{&kv, "kv"}, named_scales{&kv_scales, "kv_scales"},
        named_weights{&weights, "weights"}, named_starts{&cu_starts, "cu_starts"}, named_ends{&cu_ends, "cu_ends"};
    check_no_overlap(workspace, "workspace",
                     {named_q, named_kv, named_scales, named_weights, named_starts, named_ends});
    check_no_overlap(indices, "indices", {named_q, named_kv, named_scales, named_weights, named_starts, named_ends,
                                          {&workspace, "workspace"}});
    check_no_overlap(values, "values", {named_q, named_kv, named_scales, named_weights, named_starts, named_ends,
                                        {&workspace, "workspace"}, {&indices, "indices"}});

    Dispatcher& dispatcher = Dispatcher::instance();
    const std::shared_ptr<Device> device = dispatcher.backend().current_device();
    const Arch arch = Arch::parse(device->arch());
    const TopkChoice choice = choose_topk(
        TuningDb::instance(),
        {.arch = arch, .cu_num = device->limits().multiprocessors, .heads = whole.shape.heads,
         .head_dim = whole.shape.head_dim, .seq_len = call.seq_len, .seq_len_kv = call.seq_len_kv, .k = call.k,
         .workspace_bytes = workspace.size(0),
         .kv_rows_aligned = reinterpret_cast<std::uintptr_t>(kv.data) % 16 == 0 && kv.stride(0) % 16 == 0,
         .path = options.path, .variant = options.variant,
         .device = fmt::format("this {} ({})", device->name(), arch.name)});
    // NOTES: a pass of fewer rows could look up another tuned variant, whose head sums may round
    // differently; every pass (and the fused kernel) runs the kernel the whole call is served by,
    // so the values are those one mqa_logits() call over all rows with that kernel computes.
    const std::string logits_name = choice.logits.variant ? choice.logits.variant->name() : "baseline";
    if (choice.fused) {
        bool prepared = true;
        try {
            dispatcher.prepare_topk_variant(*choice.topk_variant, whole.shape.heads, whole.shape.head_dim);
        } catch (const Error& e) {
            if (options.path == MqaTopkPath::fused || options.variant == choice.topk_variant->name()) throw;
            log().warn("mqa_topk: the fused kernel {} is unavailable, the unfused path serves instead: {}",
                       choice.topk_variant->name(), e.what());
            prepared = false;
        }
        if (prepared) {
            run_fused(call, fused_topk_layout(call.seq_len, call.seq_len_kv, call.k), *choice.topk_variant,
                      *choice.logits.variant);
            if (options.report) {
                *options.report = {fmt::format("fused {}", choice.topk_variant->name()),
                                   fmt::format("{}, the twin of {} ({})", choice.reason, logits_name,
                                               choice.logits.reason)};
            }
            return;
        }
    }

    const std::int64_t rows_per_pass = std::min(call.seq_len, workspace.size(0) / (row_stride * 4));
    const bool pinned = choice.logits_pinned || rows_per_pass < call.seq_len;
    run_unfused_passes(call, 0, pinned ? logits_name : std::string(), cu_starts, cu_ends, nullptr);
    if (options.report) *options.report = {logits_name, fmt::format("{}; {}", choice.reason, choice.logits.reason)};
}

}  // namespace mqajit
