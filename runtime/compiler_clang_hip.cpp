#include "runtime/compiler_clang_hip.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/check.hpp"
#include "core/files.hpp"
#include "runtime/subprocess.hpp"

namespace mqajit {
namespace {

// A private folder under the system temp dir, removed with everything in it when destroyed.
class TemporaryFolder {
public:
    TemporaryFolder() {
        std::string pattern = (std::filesystem::temp_directory_path() / "mqajit-clang-XXXXXX").string();
        MQAJIT_CHECK_KIND(io, ::mkdtemp(pattern.data()) != nullptr,
                          "cannot create a temporary folder from {}; check that TMPDIR is writable", pattern);
        path_ = pattern;
    }
    ~TemporaryFolder() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    TemporaryFolder(const TemporaryFolder&) = delete;
    TemporaryFolder& operator=(const TemporaryFolder&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

void write_file(const std::filesystem::path& path, std::string_view text) {
    std::ofstream out(path, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    MQAJIT_CHECK_KIND(io, out.good(), "cannot write {}; check the temp folder's free space", path.string());
}

std::vector<char> read_file(const std::filesystem::path& path) {
    const std::string bytes = read_regular_file(path, "clang's code object", std::size_t{1} << 30);
    return {bytes.begin(), bytes.end()};
}

// "Debian clang version 22.1.8 (1~deb12u1)" -> "22.1.8"; empty when this is not clang.
std::string clang_version(const std::string& version_output) {
    constexpr std::string_view kMarker = "clang version ";
    const std::size_t at = version_output.find(kMarker);
    if (at == std::string::npos) return {};
    const std::size_t begin = at + kMarker.size();
    const std::size_t end = version_output.find_first_of(" \n(", begin);
    return version_output.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace

std::vector<std::string> ClangHipCompiler::default_candidates() {
    return {"clang-22", "/usr/lib/llvm-22/bin/clang"};
}

ClangHipCompiler::ClangHipCompiler(std::span<const std::string> candidates) {
    std::vector<std::string> tried;
    for (const std::string& candidate : candidates) {
        try {
            const ProcessResult answer = run_process({candidate, "--version"});
            const std::string version = clang_version(answer.output);
            if (answer.exit_code == 0 && !version.empty()) {
                executable_ = candidate;
                version_ = version;
                return;
            }
            tried.push_back(fmt::format("{}: not clang (exit {})", candidate, answer.exit_code));
        } catch (const Error& e) {
            tried.push_back(fmt::format("{}: {}", candidate, e.what()));
        }
    }
    MQAJIT_FAIL(not_found,
                "no clang to compile AMD code objects (tried {}); install Debian's clang-22 and lld-22 "
                "(scripts/setup.sh does)",
                fmt::join(tried, "; "));
}

std::vector<std::string> ClangHipCompiler::options_for(const std::string& arch) {
    // NOTES: --offload-device-only with --no-gpu-bundle-output gives a plain AMDGPU ELF that
    // hipModuleLoadData takes; -nogpuinc/-nogpulib keep ROCm's headers and device libraries out
    // (Debian's are too old for gfx942/gfx950); the remarks carry VGPRs, AGPRs, LDS and spills.
    // Code object v5: clang-22 makes v6 by default, while v5 is what ROCm 6's own compiler emits,
    // so every ROCm 6 runtime loads it.
    return {"-x", "hip", "--offload-device-only", "--no-gpu-bundle-output", "-nogpuinc", "-nogpulib",
            "--offload-arch=" + arch, "-mcode-object-version=5", "-O3", "-std=c++17", "-DNDEBUG",
            "-Rpass-analysis=kernel-resource-usage"};
}

CompileResult ClangHipCompiler::compile(const CompileRequest& request) const {
    MQAJIT_CHECK(request.arch.starts_with("gfx"), "clang-hip compiles for AMD archs (gfx942, gfx950), not '{}'",
                 request.arch);
    MQAJIT_CHECK(!request.source.empty(), "the source for {} is empty; nothing to compile", request.source_name);
    const std::string source_name = request.source_name.empty() ? "mqajit_kernel.hip" : request.source_name;
    MQAJIT_CHECK(source_name.find('/') == std::string::npos, "source name '{}' must be a plain file name",
                 source_name);

    const TemporaryFolder folder;
    for (const EmbeddedFile& header : request.headers) write_file(folder.path() / header.name, header.text);
    const std::filesystem::path source = folder.path() / source_name;
    const std::filesystem::path output = folder.path() / "kernel.co";
    write_file(source, request.source);

    const std::vector<std::string> options = effective_options(*this, request);
    std::vector<std::string> command{executable_};
    command.insert(command.end(), options.begin(), options.end());
    command.insert(command.end(), {"-c", "-o", output.string(), source.string()});

    const ProcessResult run = run_process(command);
    CompileResult result;
    result.log = run.output;
    if (run.exit_code != 0) {
        MQAJIT_FAIL(compile_failed,
                    "clang {} could not compile {} (kernel {}, {}), exit {}; this is a bug in the generated source "
                    "or its template: report the log below, or choose another variant.\nOptions: {}\n{}",
                    version_, source_name, request.kernel_name, request.arch, run.exit_code, fmt::join(options, " "),
                    result.log);
    }
    result.binary = read_file(output);
    MQAJIT_CHECK_KIND(compile_failed, !result.binary.empty(), "clang {} wrote an empty code object for {} ({})",
                      version_, source_name, request.arch);
    result.usage = parse_amdgpu_resource_usage(result.log, request.kernel_name);
    return result;
}

}  // namespace mqajit
