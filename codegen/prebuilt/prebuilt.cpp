#include "codegen/prebuilt.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "core/check.hpp"

// Defined by the assembler wrapper around prebuilt_kernels.fatbin (cmake/EmbedFiles.cmake).
extern "C" const char mqajit_prebuilt_fatbin[];
extern "C" const std::uint64_t mqajit_prebuilt_fatbin_size;

namespace mqajit {

std::span<const char> prebuilt_fatbin() {
    return {mqajit_prebuilt_fatbin, static_cast<std::size_t>(mqajit_prebuilt_fatbin_size)};
}

std::string baseline_kernel_name(int heads, int head_dim) {
    MQAJIT_CHECK_KIND(unsupported, (heads == 32 || heads == 64) && (head_dim == 64 || head_dim == 128),
                      "no pre-built baseline for heads={} head_dim={}; it is built for heads 32, 64 and "
                      "head_dim 64, 128",
                      heads, head_dim);
    return fmt::format("mqa_logits_baseline_h{}_d{}", heads, head_dim);
}

}  // namespace mqajit
