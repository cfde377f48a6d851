#include "codegen/prebuilt_amd.hpp"

#include <cstdint>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/prebuilt_amd/gfx9_baseline.hpp"
#include "core/check.hpp"

// Defined by the assembler wrappers around the code objects (cmake/EmbedFiles.cmake).
#if defined(MQAJIT_PREBUILT_AMD_GFX942)
extern "C" const char mqajit_prebuilt_amd_gfx942[];
extern "C" const std::uint64_t mqajit_prebuilt_amd_gfx942_size;
#endif
#if defined(MQAJIT_PREBUILT_AMD_GFX950)
extern "C" const char mqajit_prebuilt_amd_gfx950[];
extern "C" const std::uint64_t mqajit_prebuilt_amd_gfx950_size;
#endif

namespace mqajit {

std::vector<std::string> prebuilt_amd_archs() {
    std::vector<std::string> archs;
#if defined(MQAJIT_PREBUILT_AMD_GFX942)
    archs.emplace_back("gfx942");
#endif
#if defined(MQAJIT_PREBUILT_AMD_GFX950)
    archs.emplace_back("gfx950");
#endif
    return archs;
}

std::span<const char> prebuilt_amd_code_object([[maybe_unused]] const Arch& arch) {
#if defined(MQAJIT_PREBUILT_AMD_GFX942)
    if (arch.name == "gfx942") {
        return {mqajit_prebuilt_amd_gfx942, static_cast<std::size_t>(mqajit_prebuilt_amd_gfx942_size)};
    }
#endif
#if defined(MQAJIT_PREBUILT_AMD_GFX950)
    if (arch.name == "gfx950") {
        return {mqajit_prebuilt_amd_gfx950, static_cast<std::size_t>(mqajit_prebuilt_amd_gfx950_size)};
    }
#endif
    return {};
}

std::span<const char> prebuilt_amd_code_object_for(const Arch& arch) {
    MQAJIT_CHECK_KIND(internal, arch.vendor == Vendor::amd, "the AMD pre-built kernels were asked for {}", arch.name);
    const std::vector<std::string> archs = prebuilt_amd_archs();
    MQAJIT_CHECK_KIND(unsupported, !archs.empty(),
                      "this build of mqajit has no AMD baseline or reference kernel: clang-22 and lld-22 were not "
                      "found when it was built (install them and rebuild); until then AMD devices run only tuned "
                      "kernels, from `mqajit aot` code objects or hiprtc");
    const std::span<const char> object = prebuilt_amd_code_object(arch);
    MQAJIT_CHECK_KIND(unsupported, !object.empty(),
                      "there is no AMD baseline or reference kernel for {}; this build has them for {}",
                      arch.target_id(), fmt::join(archs, ", "));
    return object;
}

PrebuiltBaseline prebuilt_amd_baseline(const Arch& arch, int heads, int head_dim) {
    (void)prebuilt_amd_code_object_for(arch);  // says why there is none
    const std::string kernel_name = baseline_kernel_name(heads, head_dim);  // checks heads and head_dim
    const int k = arch.number == 950 ? MQA_GFX9_BASELINE_K_GFX950 : MQA_GFX9_BASELINE_K_GFX942;
    const Variant variant = Variant::parse(fmt::format("mfma{}x{}x{}_bkv{}_r{}_w{}_lds{}", MQA_GFX9_BASELINE_M,
                                                       MQA_GFX9_BASELINE_M, k, MQA_GFX9_BASELINE_BLOCK_KV,
                                                       MQA_GFX9_BASELINE_ROWS, MQA_GFX9_BASELINE_WAVES,
                                                       MQA_GFX9_BASELINE_BUFFERS));
    return {variant, kernel_name};
}

PrebuiltBaseline prebuilt_amd_paged_baseline(const Arch& arch, const PagedProblemShape& shape) {
    (void)prebuilt_amd_code_object_for(arch);  // says why there is none
    std::string kernel_name = paged_baseline_kernel_name(shape, "pmfma");  // checks the shape
    const int k = arch.number == 950 ? MQA_GFX9_BASELINE_K_GFX950 : MQA_GFX9_BASELINE_K_GFX942;
    const Variant variant = Variant::parse(fmt::format("pmfma{}x{}x{}_bkv{}_r{}_w{}_lds{}", MQA_GFX9_BASELINE_M,
                                                       MQA_GFX9_BASELINE_M, k, MQA_GFX9_PAGED_BASELINE_BLOCK_KV,
                                                       shape.next_n, MQA_GFX9_PAGED_BASELINE_WAVES,
                                                       MQA_GFX9_PAGED_BASELINE_BUFFERS));
    return {variant, std::move(kernel_name)};
}

}  // namespace mqajit
