#include "mqajit/mqa_topk.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>

#include "codegen/topk_select.hpp"
#include "core/check.hpp"
#include "core/log.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/mqa_logits_args.hpp"
#include "runtime/tensor_checks.hpp"

// The unfused path of issue 16: the logits of a block of rows into the workspace (mqa_logits'
// kernels, clean_logits=false), then the select kernel over each row's window; repeated until
// every row is done. Memory stays the outputs plus the workspace for any N.

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
    if (values.data != nullptr) {
        check_tensor(values, "values", DType::float32, 2, "[S, k]");
        check_size(values, "values", 0, seq_len, "S from q");
        check_size(values, "values", 1, k, "k from indices");
        MQAJIT_CHECK(values.stride(1) == 1 && values.stride(0) >= k,
                     "values is {}: k must be dense and rows must not overlap (row stride >= k)", values.describe());
    }
    check_tensor(workspace, "workspace", DType::uint8, 1, "[bytes]");
    MQAJIT_CHECK(workspace.stride(0) == 1, "workspace is {}: it must be dense", workspace.describe());
    MQAJIT_CHECK(reinterpret_cast<std::uintptr_t>(workspace.data) % 16 == 0,
                 "workspace must start on a 16-byte boundary");
    MQAJIT_CHECK(workspace.size(0) >= mqa_topk_row_bytes(seq_len_kv),
                 "workspace holds {} bytes; one row of logits over N = {} keys needs {} "
                 "(mqa_topk_workspace_bytes() gives a size)",
                 workspace.size(0), seq_len_kv, mqa_topk_row_bytes(seq_len_kv));
    return static_cast<int>(k);
}

TensorView rows_of(const TensorView& t, std::int64_t first, std::int64_t count) {
    TensorView part = t;
    part.data = static_cast<char*>(t.data) + first * t.stride(0) * element_size_bytes(t.dtype);
    part.shape[0] = count;
    return part;
}

void launch_select(const TopkSelectParams& params, void* stream) {
    Dispatcher& dispatcher = Dispatcher::instance();
    Backend& backend = dispatcher.backend();
    const std::shared_ptr<Device> device = backend.current_device();
    const Arch arch = Arch::parse(device->arch());
    const PrebuiltKernel select = backend.topk_select(arch);
    const KernelKey key{.family = "prebuilt", .variant = select.kernel_name, .arch = arch.target_id(),
                        .options_fingerprint = backend.name()};
    const std::shared_ptr<LoadedKernel> kernel =
        dispatcher.kernel_cache().get_prebuilt(*device, key, select.binary, select.kernel_name);
    TopkSelectParams argument = params;
    device->launch(*kernel, topk_select_launch_config(params.rows), stream, &argument, sizeof(argument));
}

}  // namespace

std::int64_t mqa_topk_row_bytes(std::int64_t seq_len_kv) {
    MQAJIT_CHECK(seq_len_kv >= 1 && seq_len_kv <= kMaxIndex, "seq_len_kv is {}; it must be 1 to {}", seq_len_kv,
                 kMaxIndex);
    return (seq_len_kv + 3) / 4 * 4 * 4;
}

std::int64_t mqa_topk_workspace_bytes(std::int64_t seq_len, std::int64_t seq_len_kv, std::int64_t max_bytes) {
    MQAJIT_CHECK(seq_len >= 1 && seq_len <= kMaxIndex, "seq_len is {}; it must be 1 to {}", seq_len, kMaxIndex);
    const std::int64_t row_bytes = mqa_topk_row_bytes(seq_len_kv);
    return std::clamp<std::int64_t>(max_bytes / row_bytes, 1, seq_len) * row_bytes;
}

void mqa_topk(const TensorView& q, const TensorView& kv, const TensorView& kv_scales, const TensorView& weights,
              const TensorView& cu_starts, const TensorView& cu_ends, const TensorView& indices,
              const TensorView& values, const TensorView& workspace, const MqaTopkOptions& options) {
    MQAJIT_CHECK(options.num_sms >= 0, "options.num_sms must be 0 (all) or a positive count; got {}", options.num_sms);
    check_tensor(q, "q", DType::float8_e4m3, 3, "[S, H, D]");
    check_tensor(kv, "kv", DType::float8_e4m3, 2, "[N, D]");
    const std::int64_t seq_len = q.size(0), seq_len_kv = kv.size(0);
    const int k = check_outputs(indices, values, workspace, seq_len, seq_len_kv);
    const std::int64_t row_stride = mqa_topk_row_bytes(seq_len_kv) / 4;
    const std::int64_t rows_per_pass = std::min(seq_len, workspace.size(0) / (row_stride * 4));
    const auto logits_of = [&](std::int64_t rows) {
        return TensorView::strided(workspace.data, DType::float32, {rows, seq_len_kv}, {row_stride, 1});
    };
    // Every operand checked for the whole call before the first pass launches anything.
    MqaLogitsArgs whole =
        make_mqa_logits_args(q, kv, kv_scales, weights, cu_starts, cu_ends, logits_of(seq_len), false);
    whole.shape.num_sms = options.num_sms;

    MqaLogitsOptions logits_options{.clean_logits = false, .stream = options.stream, .variant = options.variant,
                                    .num_sms = options.num_sms, .report = options.report};
    // NOTES: a pass of fewer rows could look up another tuned variant, whose head sums may round
    // differently; every pass runs the kernel the whole call's shape is served by, so the values
    // are those one mqa_logits() call over all rows computes.
    bool pinned = false;
    if (rows_per_pass < seq_len && logits_options.variant.empty()) {
        const KernelChoice choice = Dispatcher::instance().choose(whole.shape, false, "");
        logits_options.variant = choice.variant ? choice.variant->name() : "baseline";
        pinned = choice.variant.has_value();
    }
    for (std::int64_t first = 0; first < seq_len; first += rows_per_pass) {
        const std::int64_t rows = std::min(rows_per_pass, seq_len - first);
        const TensorView starts = rows_of(cu_starts, first, rows), ends = rows_of(cu_ends, first, rows);
        const TensorView q_rows = rows_of(q, first, rows), weights_rows = rows_of(weights, first, rows);
        try {
            mqa_logits(q_rows, kv, kv_scales, weights_rows, starts, ends, logits_of(rows), logits_options);
        } catch (const Error& e) {
            // As mqa_logits() does for a tuned variant that cannot be built: the baseline serves,
            // here for every pass (nothing has run yet).
            if (!pinned || first > 0) throw;
            log().warn("mqa_topk: variant {} is unavailable, the baseline kernel computes the logits instead: {}",
                       logits_options.variant, e.what());
            logits_options.variant = "baseline";
            mqa_logits(q_rows, kv, kv_scales, weights_rows, starts, ends, logits_of(rows), logits_options);
        }
        TopkSelectParams params{};
        params.logits = static_cast<const float*>(workspace.data);
        params.cu_starts = static_cast<const int*>(starts.data);
        params.cu_ends = static_cast<const int*>(ends.data);
        params.indices = static_cast<int*>(rows_of(indices, first, rows).data);
        params.values = values.data != nullptr ? static_cast<float*>(rows_of(values, first, rows).data) : nullptr;
        params.logits_stride = row_stride;
        params.indices_stride = indices.stride(0);
        params.values_stride = values.data != nullptr ? values.stride(0) : 0;
        params.rows = static_cast<int>(rows);
        params.seq_len_kv = static_cast<int>(seq_len_kv);
        params.k = k;
        params.sort_by_logit = options.sorted ? 1 : 0;
        launch_select(params, options.stream);
    }
}

}  // namespace mqajit
