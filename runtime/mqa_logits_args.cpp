#include "runtime/mqa_logits_args.hpp"

#include <cstdint>
#include <limits>
#include <utility>

#include "core/check.hpp"
#include "runtime/tensor_checks.hpp"

namespace mqajit {
namespace {

void check_dense_inner(const TensorView& t, const char* name) {
    MQAJIT_CHECK(t.stride(t.rank - 1) == 1, "{} is {}: its last dimension must be dense (stride 1)", name,
                 t.describe());
}

// logits is float32 or bfloat16, [S, N] or, with compressed rows, [S, max_seqlen_k].
void check_logits(const TensorView& logits, int max_seqlen_k, bool clean_logits) {
    const char* layout = max_seqlen_k > 0 ? "[S, max_seqlen_k]" : "[S, N]";
    check_present(logits, "logits", "float32", layout);
    MQAJIT_CHECK(logits.dtype == DType::float32 || logits.dtype == DType::bfloat16,
                 "logits has dtype {}; it must be float32 (or bfloat16) {}", to_string(logits.dtype), layout);
    MQAJIT_CHECK(max_seqlen_k >= 0, "max_seqlen_k is {}; it must be 0 (dense [S, N] rows) or a positive count",
                 max_seqlen_k);
    MQAJIT_CHECK(max_seqlen_k == 0 || !clean_logits,
                 "compressed rows (max_seqlen_k = {}) need clean_logits=False: a compressed row has no columns "
                 "outside its window to fill with -inf",
                 max_seqlen_k);
    MQAJIT_CHECK(logits.rank == 2, "logits has {} dimensions ({}); it must be {} {}", logits.rank, logits.describe(),
                 to_string(logits.dtype), layout);
    check_sizes(logits, "logits");
    check_addressable(logits, "logits");
}

bool aligned(const void* pointer, std::uintptr_t bytes) {
    return reinterpret_cast<std::uintptr_t>(pointer) % bytes == 0;
}

}  // namespace

MqaLogitsArgs make_mqa_logits_args(const TensorView& q_in, const TensorView& kv_in, const TensorView& kv_scales_in,
                                   const TensorView& weights_in, const TensorView& cu_starts_in,
                                   const TensorView& cu_ends_in, const TensorView& logits_in, bool clean_logits,
                                   int max_seqlen_k) {
    const TensorView q = with_dense_unit_strides(q_in), kv = with_dense_unit_strides(kv_in);
    const TensorView kv_scales = with_dense_unit_strides(kv_scales_in), weights = with_dense_unit_strides(weights_in);
    const TensorView cu_starts = with_dense_unit_strides(cu_starts_in), cu_ends = with_dense_unit_strides(cu_ends_in);
    const TensorView logits = with_dense_unit_strides(logits_in);
    check_tensor(q, "q", DType::float8_e4m3, 3, "[S, H, D]");
    check_tensor(kv, "kv", DType::float8_e4m3, 2, "[N, D]");
    check_tensor(kv_scales, "kv_scales", DType::float32, 1, "[N]");
    check_tensor(weights, "weights", DType::float32, 2, "[S, H]");
    check_tensor(cu_starts, "cu_starts", DType::int32, 1, "[S]");
    check_tensor(cu_ends, "cu_ends", DType::int32, 1, "[S]");
    check_logits(logits, max_seqlen_k, clean_logits);

    const std::int64_t s = q.size(0), h = q.size(1), d = q.size(2), n = kv.size(0);
    MQAJIT_CHECK_KIND(unsupported, h == 32 || h == 64, "q has {} heads; supported: 32 (GLM-5) and 64 (DeepSeek-V3.2)",
                      h);
    MQAJIT_CHECK_KIND(unsupported, d == 64 || d == 128, "head_dim is {}; supported: 64, 128", d);
    check_size(kv, "kv", 1, d, "head_dim D from q");
    check_size(kv_scales, "kv_scales", 0, n, "N from kv");
    check_size(weights, "weights", 0, s, "S from q");
    check_size(weights, "weights", 1, h, "H from q");
    check_size(cu_starts, "cu_starts", 0, s, "S from q");
    check_size(cu_ends, "cu_ends", 0, s, "S from q");
    check_size(logits, "logits", 0, s, "S from q");
    const std::int64_t columns = max_seqlen_k > 0 ? max_seqlen_k : n;
    check_size(logits, "logits", 1, columns, max_seqlen_k > 0 ? "max_seqlen_k (compressed rows)" : "N from kv");

    const std::pair<const TensorView*, const char*> named[] = {
        {&q, "q"}, {&kv, "kv"}, {&kv_scales, "kv_scales"}, {&weights, "weights"},
        {&cu_starts, "cu_starts"}, {&cu_ends, "cu_ends"}, {&logits, "logits"}};
    for (const auto& [tensor, name] : named) check_dense_inner(*tensor, name);
    MQAJIT_CHECK(q.stride(1) == d, "q is {}: heads of one query must be contiguous (h stride = D = {})", q.describe(),
                 d);
    MQAJIT_CHECK(q.stride(0) >= h * d && q.stride(0) % 16 == 0,
                 "q is {}: the row stride must be >= H*D = {} and a multiple of 16 bytes", q.describe(), h * d);
    MQAJIT_CHECK(kv.stride(0) >= d && kv.stride(0) % 16 == 0,
                 "kv is {}: the row stride must be >= D = {} and a multiple of 16 bytes", kv.describe(), d);
    MQAJIT_CHECK(weights.stride(0) >= h, "weights is {}: the row stride must be >= H = {}", weights.describe(), h);
    MQAJIT_CHECK(logits.stride(0) >= columns,
                 "logits is {}: the row stride must be >= {} = {} (padded rows are fine, overlapping rows are not)",
                 logits.describe(), max_seqlen_k > 0 ? "max_seqlen_k" : "N", columns);
    MQAJIT_CHECK(aligned(q.data, 16) && aligned(kv.data, 16), "q and kv must start on 16-byte boundaries (got {} and {})",
                 q.data, kv.data);
    MQAJIT_CHECK(aligned(kv_scales.data, 4) && aligned(weights.data, 4) && aligned(cu_starts.data, 4) &&
                     aligned(cu_ends.data, 4),
                 "kv_scales, weights, cu_starts and cu_ends must be 4-byte aligned");
    MQAJIT_CHECK(aligned(logits.data, static_cast<std::uintptr_t>(element_size_bytes(logits.dtype))),
                 "logits must be aligned to its element size ({} bytes for {})", element_size_bytes(logits.dtype),
                 to_string(logits.dtype));

    MqaLogitsArgs args;
    args.shape = ProblemShape{.heads = static_cast<int>(h), .head_dim = static_cast<int>(d), .seq_len = s,
                              .seq_len_kv = n, .logits_bf16 = logits.dtype == DType::bfloat16};
    MqaLogitsParams& p = args.params;
    p.q = static_cast<const unsigned char*>(q.data);
    p.kv = static_cast<const unsigned char*>(kv.data);
    p.kv_scales = static_cast<const float*>(kv_scales.data);
    p.weights = static_cast<const float*>(weights.data);
    p.cu_starts = static_cast<const int*>(cu_starts.data);
    p.cu_ends = static_cast<const int*>(cu_ends.data);
    p.logits = logits.data;
    p.q_stride_s = q.stride(0);
    p.kv_stride_n = kv.stride(0);
    p.weights_stride_s = weights.stride(0);
    p.logits_stride_s = logits.stride(0);
    p.seq_len = static_cast<int>(s);
    p.seq_len_kv = static_cast<int>(n);
    p.heads = static_cast<int>(h);
    p.head_dim = static_cast<int>(d);
    p.clean_logits = clean_logits ? 1 : 0;
    p.logits_bf16 = logits.dtype == DType::bfloat16 ? 1 : 0;
    p.compressed_columns = max_seqlen_k;
    p.num_kv_splits = 0;  // automatic; the family's plan fills in its count
    p.num_q_blocks = 1;
    return args;
}

void check_logits_apart(const TensorView& q, const TensorView& kv, const TensorView& kv_scales,
                        const TensorView& weights, const TensorView& cu_starts, const TensorView& cu_ends,
                        const TensorView& logits) {
    check_no_overlap(logits, "logits", {{&q, "q"}, {&kv, "kv"}, {&kv_scales, "kv_scales"}, {&weights, "weights"},
                                        {&cu_starts, "cu_starts"}, {&cu_ends, "cu_ends"}});
}

}  // namespace mqajit
