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
