#include "runtime/kernel_request.hpp"

#include <fmt/format.h>

#include "codegen/family_registry.hpp"

namespace mqajit {

KernelKey kernel_key_for(const Variant& variant, int heads, int head_dim, const Arch& arch, const Compiler& compiler) {
    return KernelKey{.family = kernel_family_for(variant).name(),
                     .variant = fmt::format("{}_h{}_d{}", variant.name(), heads, head_dim),
                     .arch = arch.name,
                     .options_fingerprint = fmt::format("{}-{}", compiler.name(), compiler.version())};
}

CompileRequest compile_request_for(const Variant& variant, int heads, int head_dim, const Arch& arch) {
    GeneratedKernel generated = kernel_family_for(variant).generate(variant, heads, head_dim, arch);
    CompileRequest request;
    request.source = std::move(generated.source);
    request.source_name = fmt::format("{}_h{}_d{}.cu", variant.name(), heads, head_dim);
    request.kernel_name = std::move(generated.kernel_name);
    request.arch = arch.name;
    request.options = std::move(generated.options);
    request.headers = generated.headers;
    return request;
}

}  // namespace mqajit
