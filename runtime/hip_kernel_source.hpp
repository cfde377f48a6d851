#pragma once
// Where the HIP backend gets a generated kernel for an AMD device: a code object that `mqajit aot` left in
// the disk cache, found under the very key aot made (no compile), else hiprtc, compiling for the
// live device's full target ID ("gfx942:sramecc+:xnack-"), whose flags go into the cache keys.

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/kernel_cache.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace mqajit {

// The key and compile request of a run-time compile on `live`: aot's, with the arch replaced by the
// full target ID, so two devices that differ only in sramecc/xnack never share a code object.
KernelKey runtime_kernel_key(const Variant& variant, int heads, int head_dim, const Arch& live,
                             const Compiler& compiler);
CompileRequest runtime_compile_request(const Variant& variant, int heads, int head_dim, const Arch& live);

// The clang-hip versions that built code objects in the kernel cache at `root` (from their
// checked meta.json), newest first; empty when there are none or the folder is unusable.
std::vector<std::string> clang_hip_versions_in(const std::filesystem::path& root);

class HipKernelSource {
public:
    // Returns the run-time compiler (hiprtc) or throws: Error(not_found) when libhiprtc is missing.
    // Called only when no ahead-of-time code object serves the kernel.
    using CompilerProvider = std::function<const Compiler&()>;
    explicit HipKernelSource(CompilerProvider runtime_compiler);

    // The kernel loaded on `device` (an AMD device: its arch() is the target ID). Throws what
    // the compiler or the device threw; dispatch turns that into the baseline.
    std::shared_ptr<LoadedKernel> get(KernelCache& cache, Device& device, const Variant& variant, int heads,
                                      int head_dim);

private:
    std::shared_ptr<LoadedKernel> ahead_of_time(KernelCache& cache, Device& device, const Variant& variant, int heads,
                                                int head_dim, const Arch& target);
    const std::vector<std::string>& aot_versions(const std::filesystem::path& root);

    CompilerProvider runtime_compiler_;
    std::mutex versions_mutex_;
    std::filesystem::path versions_root_;
    std::optional<std::vector<std::string>> versions_;  // read once per cache folder
};

}  // namespace mqajit
