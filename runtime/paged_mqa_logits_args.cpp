#include "runtime/paged_mqa_logits_args.hpp"

#include <limits>
#include <utility>

#include "core/check.hpp"
#include "runtime/tensor_checks.hpp"

namespace mqajit {
namespace {

bool aligned(const void* pointer, std::uintptr_t bytes) {
    return reinterpret_cast<std::uintptr_t>(pointer) % bytes == 0;
}

}  // namespace

PagedMqaLogitsArgs make_paged_mqa_logits_args(const TensorView& q_in, const TensorView& kv_cache_in,
                                              const TensorView& weights_in, const TensorView& context_lens_in,
                                              const TensorView& block_table_in, const TensorView& logits_in,
                                              bool clean_logits) {
    const TensorView q = with_dense_unit_strides(q_in), kv_cache = with_dense_unit_strides(kv_cache_in);
    const TensorView weights = with_dense_unit_strides(weights_in);
    const TensorView context_lens = with_dense_unit_strides(context_lens_in);
    const TensorView block_table = with_dense_unit_strides(block_table_in), logits = with_dense_unit_strides(logits_in);
    check_tensor(q, "q", DType::float8_e4m3, 4, "[B, next_n, H, D]");
    check_tensor(kv_cache, "kv_cache", DType::uint8, 4, "[num_blocks, block_kv, 1, D + 4]");
    check_tensor(weights, "weights", DType::float32, 2, "[B * next_n, H]");
    MQAJIT_CHECK(context_lens.rank == 1 || context_lens.rank == 2,
                 "context_lens has {} dimensions ({}); it must be int32 [B] or [B, next_n]", context_lens.rank,
                 context_lens.describe());
    check_tensor(context_lens, "context_lens", DType::int32, context_lens.rank, "[B] or [B, next_n]");
    check_tensor(block_table, "block_table", DType::int32, 2, "[B, max_blocks]");
    check_tensor(logits, "logits", DType::float32, 2, "[B * next_n, max_context_len]");

    const std::int64_t b = q.size(0), next_n = q.size(1), h = q.size(2), d = q.size(3);
    const std::int64_t block_kv = kv_cache.size(1), max_context_len = logits.size(1);
    MQAJIT_CHECK_KIND(unsupported, next_n >= 1 && next_n <= 4, "q has next_n = {} query tokens per request; supported: 1 to 4",
                      next_n);
    MQAJIT_CHECK_KIND(unsupported, h == 32 || h == 64, "q has {} heads; supported: 32 (GLM-5) and 64 (DeepSeek-V3.2)",
                      h);
    MQAJIT_CHECK_KIND(unsupported, d == 64 || d == 128, "head_dim is {}; supported: 64, 128", d);
    MQAJIT_CHECK_KIND(unsupported, block_kv == 64 || block_kv == 128,
                      "kv_cache has {} tokens per block; supported: 64 and 128", block_kv);
    check_size(kv_cache, "kv_cache", 2, 1, "1 (one KV head)");
    check_size(kv_cache, "kv_cache", 3, d + 4, "D + 4 (D key bytes and a 4-byte scale per token)");
    check_size(weights, "weights", 0, b * next_n, "B * next_n from q");
    check_size(weights, "weights", 1, h, "H from q");
    check_size(context_lens, "context_lens", 0, b, "B from q");
    if (context_lens.rank == 2) check_size(context_lens, "context_lens", 1, next_n, "next_n from q");
    check_size(block_table, "block_table", 0, b, "B from q");
    check_size(logits, "logits", 0, b * next_n, "B * next_n from q");
    MQAJIT_CHECK(block_table.size(1) * block_kv >= max_context_len,
                 "block_table is {} and holds at most {} x {} = {} keys per request, fewer than max_context_len = {} "
                 "(logits has {} columns); widen the table or pass fewer logits columns",
                 block_table.describe(), block_table.size(1), block_kv, block_table.size(1) * block_kv, max_context_len,
                 max_context_len);

    MQAJIT_CHECK(q.stride(3) == 1 && q.stride(2) == d && q.stride(1) == h * d,
                 "q is {}: the tokens of one request must be dense [next_n, H, D] (strides [*, {}, {}, 1])", q.describe(),
                 h * d, d);
    MQAJIT_CHECK(q.stride(0) >= next_n * h * d && q.stride(0) % 16 == 0,
                 "q is {}: the request stride must be >= next_n*H*D = {} and a multiple of 16 bytes", q.describe(),
                 next_n * h * d);
    MQAJIT_CHECK(kv_cache.stride(3) == 1 && kv_cache.stride(1) == d + 4,
                 "kv_cache is {}: each cache block must be dense (strides [*, {}, *, 1]), the layout vLLM's indexer "
                 "cache uses: block_kv * D key bytes, then block_kv fp32 scales",
                 kv_cache.describe(), d + 4);
    MQAJIT_CHECK(kv_cache.stride(0) >= block_kv * (d + 4) && kv_cache.stride(0) % 16 == 0,
                 "kv_cache is {}: the block stride must be >= block_kv * (D + 4) = {} and a multiple of 16 bytes",
                 kv_cache.describe(), block_kv * (d + 4));
    MQAJIT_CHECK(weights.stride(1) == 1 && weights.stride(0) >= h, "weights is {}: heads must be dense, row stride >= H = {}",
                 weights.describe(), h);
    MQAJIT_CHECK(context_lens.stride(context_lens.rank - 1) == 1 &&
                     (context_lens.rank == 1 || context_lens.stride(0) >= next_n),
                 "context_lens is {}: its last dimension must be dense and its rows must not overlap (row stride >= "
                 "next_n = {})",
                 context_lens.describe(), next_n);
    MQAJIT_CHECK(block_table.stride(1) == 1, "block_table is {}: its last dimension must be dense",
                 block_table.describe());
    MQAJIT_CHECK(logits.stride(1) == 1 && logits.stride(0) >= max_context_len,
                 "logits is {}: columns must be dense and the row stride >= max_context_len = {} (padded rows are fine, "
                 "overlapping rows are not)",
                 logits.describe(), max_context_len);
    MQAJIT_CHECK(aligned(q.data, 16) && aligned(kv_cache.data, 16),
                 "q and kv_cache must start on 16-byte boundaries (got {} and {})", q.data, kv_cache.data);
    MQAJIT_CHECK(aligned(weights.data, 4) && aligned(context_lens.data, 4) && aligned(block_table.data, 4) &&
                     aligned(logits.data, 4),
                 "weights, context_lens, block_table and logits must be 4-byte aligned");
    // NOTES: the kernels round a context up to whole 128-key tiles in int32, hence the margin.
    constexpr std::int64_t kMaxContextLen = kMaxIndex - 255;
    MQAJIT_CHECK(max_context_len <= kMaxContextLen && b * next_n <= kMaxIndex,
                 "logits is {}: at most {} rows and {} columns (int32 indices)", logits.describe(), kMaxIndex,
                 kMaxContextLen);

    PagedMqaLogitsArgs args;
    args.shape = PagedProblemShape{.batch = static_cast<int>(b),
                                   .next_n = static_cast<int>(next_n),
                                   .heads = static_cast<int>(h),
                                   .head_dim = static_cast<int>(d),
                                   .block_kv = static_cast<int>(block_kv),
                                   .max_context_len = static_cast<int>(max_context_len),
                                   .num_cache_blocks = kv_cache.size(0),
                                   .context_lens_2d = context_lens.rank == 2};
    // The kernels schedule the cache blocks of all requests with 32-bit counts.
    MQAJIT_CHECK(args.shape.cache_blocks_bound() <= kMaxIndex,
                 "B = {} requests of up to max_context_len = {} keys need up to {} cache blocks; at most {} per call: "
                 "split the batch",
                 b, max_context_len, args.shape.cache_blocks_bound(), kMaxIndex);
    check_no_overlap(logits, "logits", {{&q, "q"}, {&kv_cache, "kv_cache"}, {&weights, "weights"},
                                        {&context_lens, "context_lens"}, {&block_table, "block_table"}});
    PagedMqaLogitsParams& p = args.params;
    p.q = static_cast<const unsigned char*>(q.data);
    p.weights = static_cast<const float*>(weights.data);
    p.context_lens = static_cast<const int*>(context_lens.data);
    p.block_table = static_cast<const int*>(block_table.data);
    p.kv_cache = static_cast<const unsigned char*>(kv_cache.data);
    p.logits = static_cast<float*>(logits.data);
    p.q_stride_b = q.stride(0);
    p.weights_stride = weights.stride(0);
    p.context_lens_stride = context_lens.rank == 2 ? context_lens.stride(0) : 1;
    p.block_table_stride = block_table.stride(0);
    p.logits_stride = logits.stride(0);
    p.cache_block_bytes = kv_cache.stride(0);
    p.batch = static_cast<int>(b);
    p.next_n = static_cast<int>(next_n);
    p.heads = static_cast<int>(h);
    p.head_dim = static_cast<int>(d);
    p.block_kv = static_cast<int>(block_kv);
    p.max_blocks = static_cast<int>(block_table.size(1));
    p.max_context_len = static_cast<int>(max_context_len);
    p.context_lens_2d = context_lens.rank == 2 ? 1 : 0;
    p.clean_logits = clean_logits ? 1 : 0;
    p.num_cache_blocks = static_cast<int>(std::min<std::int64_t>(kv_cache.size(0), kMaxIndex));
    return args;
}

}  // namespace mqajit
