#include "runtime/hip_kernel_source.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/log.hpp"
#include "runtime/compiler_clang_hip.hpp"
#include "runtime/kernel_request.hpp"

namespace mqajit {
namespace {

// Stands in for the clang that ran `mqajit aot`: the same name, version and options, so it makes the
// same cache keys, but it never compiles. A miss is Error(not_found).
class AheadOfTimeClang final : public Compiler {
public:
    explicit AheadOfTimeClang(std::string version) : version_(std::move(version)) {}
    std::string name() const override { return "clang-hip"; }
    std::string version() const override { return version_; }
    std::vector<std::string> base_options(const std::string& arch) const override {
        return ClangHipCompiler::options_for(arch);
    }
    CompileResult compile(const CompileRequest& request) const override {
        MQAJIT_FAIL(not_found, "no code object of {} for {} from `mqajit aot` (clang {}) in the kernel cache",
                    request.kernel_name, request.arch, version_);
    }

private:
    std::string version_;
};

}  // namespace

KernelKey runtime_kernel_key(const Variant& variant, int heads, int head_dim, const Arch& live,
                             const Compiler& compiler) {
    KernelKey key = kernel_key_for(variant, heads, head_dim, live, compiler);
    key.arch = live.target_id();
    return key;
}

CompileRequest runtime_compile_request(const Variant& variant, int heads, int head_dim, const Arch& live) {
    CompileRequest request = compile_request_for(variant, heads, head_dim, live);
    request.arch = live.target_id();
    return request;
}

std::vector<std::string> clang_hip_versions_in(const std::filesystem::path& root) {
    // NOTES: through DiskCache, so only entries it trusts count, and no file in the cache (a FIFO,
    // a link to a device) can stall the search.
    std::vector<std::string> versions;
    for (const DiskCacheMeta& meta : DiskCache(root).entries()) {
        if (meta.compiler != "clang-hip" || meta.compiler_version.empty()) continue;
        if (std::ranges::find(versions, meta.compiler_version) == versions.end()) versions.push_back(meta.compiler_version);
    }
    std::ranges::sort(versions, std::greater<>());
    return versions;
}

HipKernelSource::HipKernelSource(CompilerProvider runtime_compiler) : runtime_compiler_(std::move(runtime_compiler)) {}

const std::vector<std::string>& HipKernelSource::aot_versions(const std::filesystem::path& root) {
    const std::lock_guard lock(versions_mutex_);
    // NOTES: the folder is read once per process: a code object aot adds later is found by the
    // next process, while this one compiles with hiprtc.
    if (!versions_ || versions_root_ != root) {
        versions_ = clang_hip_versions_in(root);
        versions_root_ = root;
    }
    return *versions_;
}

std::shared_ptr<LoadedKernel> HipKernelSource::ahead_of_time(KernelCache& cache, Device& device,
                                                             const Variant& variant, int heads, int head_dim,
                                                             const Arch& target) {
    const std::filesystem::path& root = cache.disk()->root();
    for (const std::string& version : aot_versions(root)) {
        const AheadOfTimeClang clang(version);
        const CompileRequest request = compile_request_for(variant, heads, head_dim, target);
        if (!std::filesystem::exists(root / DiskCache::key_for(clang, request))) continue;
        try {
            return cache.get(device, clang, kernel_key_for(variant, heads, head_dim, target, clang),
                             [&] { return request; });
        } catch (const Error& e) {
            log().debug("the aot code object of {} (clang {}) did not load, trying the next source: {}",
                        variant.name(), version, e.what());
        }
    }
    return nullptr;
}

std::shared_ptr<LoadedKernel> HipKernelSource::get(KernelCache& cache, Device& device, const Variant& variant,
                                                   int heads, int head_dim) {
    const Arch live = Arch::parse(device.arch());
    // NOTES: aot builds for the bare processor ("gfx942"), whose code object runs with any
    // sramecc/xnack setting, so it is looked up without the device's flags.
    Arch processor = live;
    processor.features.clear();
    if (cache.disk()) {
        if (auto kernel = ahead_of_time(cache, device, variant, heads, head_dim, processor)) return kernel;
    }
    const Compiler& compiler = runtime_compiler_();
    return cache.get(device, compiler, runtime_kernel_key(variant, heads, head_dim, live, compiler),
                     [&] { return runtime_compile_request(variant, heads, head_dim, live); });
}

}  // namespace mqajit
