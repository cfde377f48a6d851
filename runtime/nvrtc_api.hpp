#pragma once
// NVRTC as a struct of function pointers, loaded with dlopen: compiling needs no GPU and no link-time
// dependency. <nvrtc.h> is included for its types only.

#include <nvrtc.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/dynamic_library.hpp"

namespace mqajit {

#define MQAJIT_NVRTC_FUNCTIONS(X)                                                                     \
    X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram)               \
    X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetCUBINSize)        \
    X(nvrtcGetCUBIN) X(nvrtcGetPTXSize) X(nvrtcGetPTX)

class NvrtcApi {
public:
#define MQAJIT_NVRTC_DECLARE_POINTER(function) decltype(&::function) function = nullptr;
    MQAJIT_NVRTC_FUNCTIONS(MQAJIT_NVRTC_DECLARE_POINTER)
#undef MQAJIT_NVRTC_DECLARE_POINTER

    // settings().nvrtc_library when set, else "libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", and
    // last the build's toolkit: MQAJIT_CUDA_LIBRARY_DIR "/libnvrtc.so".
    static std::vector<std::string> default_candidates();
    // Opens the first loadable candidate and resolves every function; throws Error(not_found) naming
    // every path tried, or every missing function.
    static std::shared_ptr<const NvrtcApi> load(std::span<const std::string> candidates);

    const std::string& library_path() const { return library_path_; }
    int major_version() const { return major_; }
    int minor_version() const { return minor_; }
    std::string describe(nvrtcResult result) const;

private:
    explicit NvrtcApi(DynamicLibrary library);

    DynamicLibrary library_;
    std::optional<DynamicLibrary> builtins_;
    std::string library_path_;
    int major_ = 0;
    int minor_ = 0;
};

}  // namespace mqajit
