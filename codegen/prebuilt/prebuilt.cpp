#include "codegen/prebuilt.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "codegen/families/sm80_mqa_logits/family.hpp"
#include "codegen/families/sm90_paged_mqa_logits/family.hpp"
#include "core/check.hpp"

// Defined by the assembler wrapper around prebuilt_kernels.fatbin (cmake/EmbedFiles.cmake).
extern "C" const char mqajit_prebuilt_fatbin[];
extern "C" const std::uint64_t mqajit_prebuilt_fatbin_size;
extern "C" const char mqajit_prebuilt_paged_fatbin[];
extern "C" const std::uint64_t mqajit_prebuilt_paged_fatbin_size;
extern "C" const char mqajit_prebuilt_topk_fatbin[];
extern "C" const std::uint64_t mqajit_prebuilt_topk_fatbin_size;

namespace mqajit {

std::span<const char> prebuilt_fatbin() {
    return {mqajit_prebuilt_fatbin, static_cast<std::size_t>(mqajit_prebuilt_fatbin_size)};
}

bool prebuilt_has_sm90a() {
#if defined(MQAJIT_PREBUILT_HAS_SM90A)
    return true;
#else
    return false;
#endif
}

PrebuiltBaseline prebuilt_baseline(const Arch& arch, int heads, int head_dim) {
    const std::string mma_name = baseline_kernel_name(heads, head_dim);  // checks heads and head_dim
    const bool hopper = arch.vendor == Vendor::nvidia && arch.number == 90 && arch.arch_specific;
    if (hopper && prebuilt_has_sm90a()) {
        return {Variant::parse(fmt::format("wgmma64x128x32_bkv64_r{}_w4_lds4", 128 / heads)),
                fmt::format("mqa_logits_baseline_sm90_h{}_d{}", heads, head_dim)};
    }
    return {baseline_variant(heads), mma_name};
}

std::span<const char> prebuilt_topk_fatbin() {
    return {mqajit_prebuilt_topk_fatbin, static_cast<std::size_t>(mqajit_prebuilt_topk_fatbin_size)};
}

std::span<const char> prebuilt_paged_fatbin() {
    return {mqajit_prebuilt_paged_fatbin, static_cast<std::size_t>(mqajit_prebuilt_paged_fatbin_size)};
}

PrebuiltBaseline prebuilt_paged_baseline(const Arch& arch, const PagedProblemShape& shape) {
    const bool hopper = arch.vendor == Vendor::nvidia && arch.number == 90 && arch.arch_specific;
    MQAJIT_CHECK_KIND(unsupported, hopper, "paged_mqa_logits has kernels for sm_90a only; this device is {}", arch.name);
    MQAJIT_CHECK_KIND(unsupported, prebuilt_has_sm90a(),
                      "this build of mqajit has no sm_90a kernels (MQAJIT_CUDA_ARCHS lacks 90), so no pre-built "
                      "paged_mqa_logits baseline; rebuild with 90 in MQAJIT_CUDA_ARCHS or let the JIT serve");
    std::string kernel_name = paged_baseline_kernel_name(shape, "pwgmma");  // checks the shape
    return {paged_baseline_variant(shape.heads, shape.next_n), std::move(kernel_name)};
}

}  // namespace mqajit
