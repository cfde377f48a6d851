#include "runtime/compiler_nvrtc.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.hpp"
#include "core/log.hpp"

namespace mqajit {
namespace {

struct ProgramDestroyer {
    const NvrtcApi* api;
    void operator()(_nvrtcProgram* program) const {
        if (program != nullptr) api->nvrtcDestroyProgram(&program);
    }
};
using ProgramHandle = std::unique_ptr<_nvrtcProgram, ProgramDestroyer>;

void nvrtc_check(const NvrtcApi& api, nvrtcResult result, std::string_view call, std::string_view source_name) {
    MQAJIT_CHECK_KIND(compile_failed, result == NVRTC_SUCCESS,
                      "{} failed for {}: {}; check that NVRTC ({}) is installed intact", call, source_name,
                      api.describe(result), api.library_path());
}

std::string program_log(const NvrtcApi& api, nvrtcProgram program) {
    std::size_t size_bytes = 0;
    if (api.nvrtcGetProgramLogSize(program, &size_bytes) != NVRTC_SUCCESS || size_bytes <= 1) return {};
    std::string log(size_bytes, '\0');
    if (api.nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
    log.resize(size_bytes - 1);  // drop the terminating NUL
    return log;
}

}  // namespace

NvrtcCompiler::NvrtcCompiler(std::shared_ptr<const NvrtcApi> api) : api_(std::move(api)) {
    MQAJIT_CHECK_KIND(internal, api_ != nullptr, "NvrtcCompiler needs a loaded NvrtcApi");
}

std::string NvrtcCompiler::version() const {
    return fmt::format("{}.{}", api_->major_version(), api_->minor_version());
}

std::vector<std::string> NvrtcCompiler::base_options(const std::string& arch) const {
    // NOTES: -arch=sm_XX (a real arch, not compute_XX) makes NVRTC run ptxas and hand back a CUBIN;
    // --ptxas-options=-v puts registers, shared memory and spills into the log for parse_ptxas_usage.
    return {"-arch=" + arch, "-std=c++17", "-default-device", "--ptxas-options=-v", "-DNDEBUG", "-lineinfo"};
}

CompileResult NvrtcCompiler::compile(const CompileRequest& request) const {
    MQAJIT_CHECK(request.arch.starts_with("sm_"), "NVRTC compiles for NVIDIA archs (sm_80, sm_90a, ...), not '{}'",
                 request.arch);
    MQAJIT_CHECK(!request.source.empty(), "the source for {} is empty; nothing to compile", request.source_name);
    const std::string source_name = request.source_name.empty() ? "mqajit_kernel.cu" : request.source_name;

    std::vector<std::string> header_names;
    std::vector<std::string> header_texts;
    for (const EmbeddedFile& header : request.headers) {
        header_names.emplace_back(header.name);
        header_texts.emplace_back(header.text);
    }
    std::vector<const char*> header_name_pointers;
    std::vector<const char*> header_text_pointers;
    for (std::size_t i = 0; i < header_names.size(); ++i) {
        header_name_pointers.push_back(header_names[i].c_str());
        header_text_pointers.push_back(header_texts[i].c_str());
    }

    nvrtcProgram raw_program = nullptr;
    nvrtc_check(*api_,
                api_->nvrtcCreateProgram(&raw_program, request.source.c_str(), source_name.c_str(),
                                         static_cast<int>(header_names.size()), header_text_pointers.data(),
                                         header_name_pointers.data()),
                "nvrtcCreateProgram", source_name);
    const ProgramHandle program(raw_program, ProgramDestroyer{api_.get()});

    const std::vector<std::string> options = effective_options(*this, request);
    std::vector<const char*> option_pointers;
    for (const std::string& option : options) option_pointers.push_back(option.c_str());

    const nvrtcResult compiled =
        api_->nvrtcCompileProgram(program.get(), static_cast<int>(option_pointers.size()), option_pointers.data());
    CompileResult result;
    result.log = program_log(*api_, program.get());
    if (compiled != NVRTC_SUCCESS) {
        MQAJIT_FAIL(compile_failed,
                    "NVRTC {} could not compile {} (kernel {}, {}): {}; this is a bug in the generated source or its "
                    "template: report the log below, or choose another variant.\nOptions: {}\n{}",
                    version(), source_name, request.kernel_name, request.arch, api_->describe(compiled),
                    fmt::join(options, " "), result.log);
    }

    std::size_t binary_bytes = 0;
    nvrtc_check(*api_, api_->nvrtcGetCUBINSize(program.get(), &binary_bytes), "nvrtcGetCUBINSize", source_name);
    MQAJIT_CHECK_KIND(compile_failed, binary_bytes > 0,
                      "NVRTC produced no CUBIN for {} ({}); the arch must be a real one like sm_90a, not compute_90a",
                      source_name, request.arch);
    result.binary.resize(binary_bytes);
    nvrtc_check(*api_, api_->nvrtcGetCUBIN(program.get(), result.binary.data()), "nvrtcGetCUBIN", source_name);
    result.usage = parse_ptxas_usage(result.log, request.kernel_name);
    if (result.usage.registers < 0) {
        // NOTES: NVRTC 12.9+ serves repeated compiles from the CUDA compute cache and then prints no
        // ptxas report; CUDA_CACHE_DISABLE=1 (which the mqajit CLI sets) brings it back.
        log().debug("NVRTC gave no ptxas report for {} (served from the CUDA compute cache?): registers and spills "
                    "unknown",
                    source_name);
    }
    return result;
}

}  // namespace mqajit
