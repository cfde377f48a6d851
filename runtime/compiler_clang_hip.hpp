#pragma once
// The offline AMD Compiler: an installed clang (Debian's clang-22) compiling HIP device code to a
// code object, with no GPU, no ROCm and no HIP headers (the templates bring hip_minimal.cuh).

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/compiler.hpp"

namespace mqajit {

class ClangHipCompiler final : public Compiler {
public:
    // "clang-22" (found on PATH when run), then /usr/lib/llvm-22/bin/clang.
    static std::vector<std::string> default_candidates();

    // Uses the first candidate that answers `--version` as clang; throws Error(not_found) naming
    // every candidate tried.
    explicit ClangHipCompiler(std::span<const std::string> candidates);
    ClangHipCompiler() : ClangHipCompiler(default_candidates()) {}

    std::string name() const override { return "clang-hip"; }
    std::string version() const override { return version_; }  // "22.1.8"
    std::vector<std::string> base_options(const std::string& arch) const override { return options_for(arch); }
    // The options every compile gets; they depend on nothing but the arch, so the cache key of a code
    // object can be made on a machine without clang (runtime/hip_kernel_source.cpp does).
    static std::vector<std::string> options_for(const std::string& arch);
    // Writes the source and headers to a temporary folder, runs clang, returns the code object (an
    // AMDGPU ELF, not an offload bundle) and the usage from clang's resource-usage remarks.
    CompileResult compile(const CompileRequest& request) const override;

    const std::string& executable() const { return executable_; }

private:
    std::string executable_;
    std::string version_;
};

// Parses clang's -Rpass-analysis=kernel-resource-usage remarks ("remark: Function Name: k",
// "remark:     VGPRs: 164", ...) into ResourceUsage: `registers` = VGPRs, plus AGPRs, SGPRs,
// spilled VGPRs/SGPRs, scratch bytes per lane and static LDS (`shared_bytes`). With several
// functions in the log: the one named `kernel_name`, else the one using most VGPRs.
ResourceUsage parse_amdgpu_resource_usage(std::string_view log, std::string_view kernel_name);

}  // namespace mqajit
