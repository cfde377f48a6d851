#include "runtime/compiler_hiprtc.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.hpp"
#include "runtime/compiler_clang_hip.hpp"

namespace mqajit {
namespace {

// A hiprtcProgram destroyed with its scope, so a failed compile leaks nothing.
class Program {
public:
    Program(const HiprtcApi& api, const CompileRequest& request) : api_(api) {
        // NOTES: EmbeddedFile holds string_views, which need not end in NUL; hiprtc wants C strings.
        std::vector<std::string> names, contents;
        std::vector<const char*> name_pointers, text_pointers;
        for (const EmbeddedFile& header : request.headers) {
            names.emplace_back(header.name);
            contents.emplace_back(header.text);
        }
        for (std::size_t i = 0; i < names.size(); ++i) {
            name_pointers.push_back(names[i].c_str());
            text_pointers.push_back(contents[i].c_str());
        }
        const HiprtcResult created = api_.hiprtcCreateProgram(
            &program_, request.source.c_str(), request.source_name.c_str(), static_cast<int>(names.size()),
            text_pointers.data(), name_pointers.data());
        MQAJIT_CHECK_KIND(compile_failed, created == kHiprtcSuccess, "hiprtcCreateProgram({}) failed: {}",
                          request.source_name, api_.describe(created));
    }
    ~Program() { api_.hiprtcDestroyProgram(&program_); }
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;

    HiprtcProgram get() const { return program_; }

    std::string log() const {
        std::size_t size = 0;
        if (api_.hiprtcGetProgramLogSize(program_, &size) != kHiprtcSuccess || size == 0) return {};
        std::string text(size, '\0');
        if (api_.hiprtcGetProgramLog(program_, text.data()) != kHiprtcSuccess) return {};
        while (!text.empty() && text.back() == '\0') text.pop_back();
        return text;
    }

private:
    const HiprtcApi& api_;
    HiprtcProgram program_ = nullptr;
};

}  // namespace

HiprtcCompiler::HiprtcCompiler(std::shared_ptr<const HiprtcApi> api)
    : api_(std::move(api)), version_(fmt::format("{}.{}", api_->major_version(), api_->minor_version())) {
    MQAJIT_CHECK_KIND(unsupported, api_->major_version() >= kMinimumMajorVersion,
                      "hiprtc {} at {} is too old to compile for gfx942/gfx950; install ROCm {}.0 or newer",
                      version_, api_->library_path(), kMinimumMajorVersion);
}

std::vector<std::string> HiprtcCompiler::base_options(const std::string& arch) const {
    return {"--offload-arch=" + arch, "-O3", "-std=c++17", "-DNDEBUG"};
}

CompileResult HiprtcCompiler::compile(const CompileRequest& request) const {
    MQAJIT_CHECK(request.arch.starts_with("gfx"), "hiprtc compiles for AMD archs (gfx942, gfx950), not '{}'",
                 request.arch);
    MQAJIT_CHECK(!request.source.empty(), "the source for {} is empty; nothing to compile", request.source_name);
    const Program program(*api_, request);
    const std::vector<std::string> options = effective_options(*this, request);
    std::vector<const char*> option_pointers;
    for (const std::string& option : options) option_pointers.push_back(option.c_str());

    const HiprtcResult compiled =
        api_->hiprtcCompileProgram(program.get(), static_cast<int>(option_pointers.size()), option_pointers.data());
    CompileResult result;
    result.log = program.log();
    if (compiled != kHiprtcSuccess) {
        MQAJIT_FAIL(compile_failed,
                    "hiprtc {} could not compile {} (kernel {}, {}): {}; this is a bug in the generated source or its "
                    "template: report the log below, or choose another variant.\nOptions: {}\n{}",
                    version_, request.source_name, request.kernel_name, request.arch, api_->describe(compiled),
                    fmt::join(options, " "), result.log);
    }
    std::size_t size = 0;
    const HiprtcResult sized = api_->hiprtcGetCodeSize(program.get(), &size);
    MQAJIT_CHECK_KIND(compile_failed, sized == kHiprtcSuccess && size > 0,
                      "hiprtc {} gave no code object for {} ({}): {}", version_, request.source_name, request.arch,
                      api_->describe(sized));
    result.binary.resize(size);
    const HiprtcResult copied = api_->hiprtcGetCode(program.get(), result.binary.data());
    MQAJIT_CHECK_KIND(compile_failed, copied == kHiprtcSuccess, "hiprtcGetCode({}) failed: {}", request.source_name,
                      api_->describe(copied));
    // NOTES: hiprtc prints no resource remarks unless asked, so usage is mostly unknown (-1) here;
    // `mqajit aot` is where VGPRs, LDS and spills are checked.
    result.usage = parse_amdgpu_resource_usage(result.log, request.kernel_name);
    return result;
}

}  // namespace mqajit
