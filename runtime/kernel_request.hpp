#pragma once
// The cache key and the compile request of a generated kernel: what every backend's kernel
// source and `mqajit aot` build, so that both find the same cache entries.

#include "codegen/kernel_family.hpp"
#include "runtime/compiler.hpp"
#include "runtime/kernel_cache.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace mqajit {

// Names the kernel without generating it: the family's name, the variant and shape, the arch, the compiler.
KernelKey kernel_key_for(const Variant& variant, int heads, int head_dim, const Arch& arch, const Compiler& compiler);
// Generates the source (the family's generate(), which refuses what cannot run on `arch`).
CompileRequest compile_request_for(const Variant& variant, int heads, int head_dim, const Arch& arch);

}  // namespace mqajit
