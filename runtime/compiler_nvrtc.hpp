#pragma once
// The NVIDIA Compiler: NVRTC, loaded at run time, producing a CUBIN for a real arch (sm_90a, ...).

#include <memory>

#include "runtime/compiler.hpp"
#include "runtime/nvrtc_api.hpp"

namespace mqajit {

class NvrtcCompiler final : public Compiler {
public:
    explicit NvrtcCompiler(std::shared_ptr<const NvrtcApi> api);

    std::string name() const override { return "nvrtc"; }
    std::string version() const override;  // "13.0", from nvrtcVersion
    std::vector<std::string> base_options(const std::string& arch) const override;
    CompileResult compile(const CompileRequest& request) const override;

private:
    std::shared_ptr<const NvrtcApi> api_;
};

}  // namespace mqajit
