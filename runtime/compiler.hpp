#pragma once
// A Compiler turns kernel source into a loadable binary for one arch. It needs no GPU, so it also
// serves `mqajit aot` on a build machine.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/embedded_file.hpp"

namespace mqajit {

struct CompileRequest {
    std::string source;                       // the generated translation unit
    std::string source_name;                  // e.g. "wgmma64x128x32_bkv128_r4_w2_lds3.cu", for logs
    std::string kernel_name;                  // the extern "C" __global__ function to keep
    std::string arch;                         // "sm_90a", "gfx950", ...
    std::vector<std::string> options;         // extra compiler options (already in the cache key)
    std::span<const EmbeddedFile> headers;    // headers the source may #include by name
};

struct ResourceUsage {
    int registers = -1;          // per thread; -1 when the compiler did not say
    int shared_bytes = -1;       // static shared memory
    int spill_store_bytes = -1;
    int spill_load_bytes = -1;
    int stack_bytes = -1;
    // AMD (clang's kernel-resource-usage remarks); `registers` holds the VGPRs there.
    int agprs = -1;              // accumulation VGPRs per lane
    int sgprs = -1;              // scalar registers per wave
    int vgpr_spills = -1;        // spilled VGPRs (a count, not bytes)
    int sgpr_spills = -1;        // spilled SGPRs
    int scratch_bytes = -1;      // private (scratch) memory per lane
    // ptxas warned that it serialized wgmma.mma_async (C7518 and kin): the kernel lost its overlap.
    bool wgmma_serialized = false;
    bool spills() const {
        return spill_store_bytes > 0 || spill_load_bytes > 0 || vgpr_spills > 0 || sgpr_spills > 0;
    }
};

struct CompileResult {
    std::vector<char> binary;    // cubin (NVIDIA) or code object (AMD)
    std::string log;             // the compiler's full log (warnings, ptxas -v)
    ResourceUsage usage;         // parsed from the log
};

class Compiler {
public:
    virtual ~Compiler() = default;
    virtual std::string name() const = 0;      // "nvrtc"
    virtual std::string version() const = 0;   // "13.0"
    // Options every compile gets, part of the cache key.
    virtual std::vector<std::string> base_options(const std::string& arch) const = 0;
    // Throws mqajit::Error(compile_failed) carrying the full log when compilation fails.
    virtual CompileResult compile(const CompileRequest& request) const = 0;
};

// Everything a compile gets: the compiler's base options, then the request's own.
inline std::vector<std::string> effective_options(const Compiler& compiler, const CompileRequest& request) {
    std::vector<std::string> options = compiler.base_options(request.arch);
    options.insert(options.end(), request.options.begin(), request.options.end());
    return options;
}

// Parses a ptxas -v style log ("Used 168 registers, 0 bytes spill stores, ...") into ResourceUsage.
// With several functions in the log: the one named `kernel_name`, else the one using most registers.
ResourceUsage parse_ptxas_usage(const std::string& log);
ResourceUsage parse_ptxas_usage(std::string_view log, std::string_view kernel_name);

}  // namespace mqajit
