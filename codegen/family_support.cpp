#include "codegen/family_support.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "codegen/templates.hpp"
#include "core/check.hpp"

namespace mqajit {

std::string generated_kernel_name(const Variant& variant, int heads, int head_dim) {
    return fmt::format("mqa_logits_{}_h{}_d{}", variant.name(), heads, head_dim);
}

void check_generatable(const KernelFamily& family, const Variant& variant, int heads, int head_dim, const Arch& arch) {
    MQAJIT_CHECK_KIND(internal, variant.op == family.op(), "the {} family was asked to generate {}", family.name(),
                      variant.name());
    const Support support = family.rules().check(arch, heads, head_dim, variant);
    MQAJIT_CHECK_KIND(unsupported, support.ok, "variant {} cannot be generated for {} at heads={} head_dim={}: {}",
                      variant.name(), arch.name, heads, head_dim, support.reason);
}

GeneratedKernel generated_unit(const Variant& variant, int heads, int head_dim, const Arch& arch,
                               std::string_view header, std::string_view macro, std::string_view macro_arguments) {
    GeneratedKernel kernel;
    kernel.kernel_name = generated_kernel_name(variant, heads, head_dim);
    kernel.source = fmt::format("// mqajit generated: variant {}, heads {}, head_dim {}, arch {}\n"
                                "#include \"{}\"\n"
                                "{}({}, {})\n",
                                variant.name(), heads, head_dim, arch.name, header, macro, kernel.kernel_name,
                                macro_arguments);
    kernel.headers = templates_included_by(header);
    return kernel;
}

Support fits_paged_call(const Variant& variant, const PagedProblemShape& shape) {
    if (variant.rows != shape.next_n) {
        return {false, fmt::format("r={} must equal the call's next_n, {}", variant.rows, shape.next_n)};
    }
    if (variant.bkv != shape.block_kv) {
        return {false, fmt::format("bkv={} must equal the cache's block_kv, {} (one cache block per pipeline step)",
                                   variant.bkv, shape.block_kv)};
    }
    return {true, {}};
}

void check_shared_bytes(const Variant& variant, std::size_t bytes, const DeviceLimits& limits,
                        std::string_view memory, std::string_view remedy) {
    MQAJIT_CHECK_KIND(unsupported, bytes <= limits.max_shared_bytes_per_block,
                      "variant {} needs {} B of {}; the device allows {} B per block{}{}", variant.name(), bytes,
                      memory, limits.max_shared_bytes_per_block, remedy.empty() ? "" : " ", remedy);
}

void check_row_alignment(const MqaLogitsParams& params, std::string_view kernels) {
    const auto aligned = [](const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; };
    MQAJIT_CHECK(aligned(params.q) && params.q_stride_s % 16 == 0,
                 "q must start on a 16-byte boundary with a row stride that is a multiple of 16 bytes for the "
                 "{} kernels (stride {}); pad or copy q",
                 kernels, params.q_stride_s);
    MQAJIT_CHECK(aligned(params.kv) && params.kv_stride_n % 16 == 0,
                 "kv must start on a 16-byte boundary with a row stride that is a multiple of 16 bytes for the "
                 "{} kernels (stride {}); pad or copy kv",
                 kernels, params.kv_stride_n);
}

}  // namespace mqajit
