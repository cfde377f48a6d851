#include "codegen/baseline.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/check.hpp"

namespace mqajit {

std::string baseline_kernel_name(int heads, int head_dim) {
    MQAJIT_CHECK_KIND(unsupported, (heads == 32 || heads == 64) && (head_dim == 64 || head_dim == 128),
                      "no pre-built baseline for heads={} head_dim={}; it is built for heads 32, 64 and "
                      "head_dim 64, 128",
                      heads, head_dim);
    return fmt::format("mqa_logits_baseline_h{}_d{}", heads, head_dim);
}

std::string paged_baseline_kernel_name(const PagedProblemShape& shape, std::string_view jit_op) {
    MQAJIT_CHECK_KIND(unsupported, (shape.heads == 32 || shape.heads == 64) &&
                                       (shape.head_dim == 64 || shape.head_dim == 128) && shape.next_n >= 1 &&
                                       shape.next_n <= 4,
                      "the pre-built paged_mqa_logits baselines take heads 32 or 64, head_dim 64 or 128 and next_n "
                      "1 to 4; got heads {}, head_dim {}, next_n {}",
                      shape.heads, shape.head_dim, shape.next_n);
    MQAJIT_CHECK_KIND(unsupported, shape.block_kv == 64,
                      "the pre-built paged_mqa_logits baselines read 64-token cache blocks; this cache has {} tokens "
                      "per block, which needs a JIT kernel ({}..._bkv{}; MQAJIT_DISABLE_JIT must be off)",
                      shape.block_kv, jit_op, shape.block_kv);
    return fmt::format("paged_mqa_logits_baseline_h{}_d{}_n{}", shape.heads, shape.head_dim, shape.next_n);
}

LaunchConfig reference_launch_config(const ProblemShape& shape) {
    LaunchConfig config;
    config.grid_x = static_cast<unsigned>((shape.seq_len_kv + 127) / 128);
    // NOTES: gridDim.y stops at 65535; the reference kernel strides over the rows past it.
    config.grid_y = static_cast<unsigned>(std::min<std::int64_t>(shape.seq_len, 65535));
    config.block_x = 128;
    return config;
}

LaunchConfig paged_reference_launch_config(const PagedProblemShape& shape) {
    LaunchConfig config;
    config.grid_x = static_cast<unsigned>(std::max(1, (shape.max_context_len + 127) / 128));
    config.grid_y = static_cast<unsigned>(std::clamp<std::int64_t>(std::int64_t{shape.batch} * shape.next_n, 1, 65535));
    config.block_x = 128;
    return config;
}

}  // namespace mqajit
