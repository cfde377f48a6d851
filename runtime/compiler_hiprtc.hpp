#pragma once
// The run-time AMD Compiler: ROCm's hiprtc (dlopen'd), compiling for the live device's full target
// ID, so a code object built here carries the device's sramecc/xnack settings.

#include <memory>

#include "runtime/compiler.hpp"
#include "runtime/hiprtc_api.hpp"

namespace mqajit {

class HiprtcCompiler final : public Compiler {
public:
    // NOTES: hiprtc before 6.0 does not know gfx942/gfx950 (Debian's 5.2 crashes on them).
    static constexpr int kMinimumMajorVersion = 6;

    // Throws Error(unsupported) for a hiprtc older than 6.0.
    explicit HiprtcCompiler(std::shared_ptr<const HiprtcApi> api);

    std::string name() const override { return "hiprtc"; }
    std::string version() const override { return version_; }  // "6.2"
    // "--offload-arch=<arch>" with the arch as given: a full target ID keeps its feature flags.
    std::vector<std::string> base_options(const std::string& arch) const override;
    // Throws Error(compile_failed) carrying hiprtc's full log.
    CompileResult compile(const CompileRequest& request) const override;

private:
    std::shared_ptr<const HiprtcApi> api_;
    std::string version_;
};

}  // namespace mqajit
