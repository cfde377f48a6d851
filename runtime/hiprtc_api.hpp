#pragma once
// hiprtc (libhiprtc) as a struct of function pointers, loaded with dlopen, for compiling at run time
// on a ROCm machine. Types are declared here (hiprtc's C ABI), so no HIP header is needed.

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/dynamic_library.hpp"

namespace mqajit {

using HiprtcResult = int;  // hiprtcResult
inline constexpr HiprtcResult kHiprtcSuccess = 0;
using HiprtcProgram = struct _hiprtcProgram*;

class HiprtcApi {
public:
    HiprtcResult (*hiprtcVersion)(int* major, int* minor) = nullptr;
    const char* (*hiprtcGetErrorString)(HiprtcResult result) = nullptr;
    HiprtcResult (*hiprtcCreateProgram)(HiprtcProgram* program, const char* source, const char* name,
                                        int num_headers, const char* const* headers,
                                        const char* const* include_names) = nullptr;
    HiprtcResult (*hiprtcDestroyProgram)(HiprtcProgram* program) = nullptr;
    HiprtcResult (*hiprtcCompileProgram)(HiprtcProgram program, int num_options, const char* const* options) = nullptr;
    HiprtcResult (*hiprtcGetProgramLogSize)(HiprtcProgram program, std::size_t* size_bytes) = nullptr;
    HiprtcResult (*hiprtcGetProgramLog)(HiprtcProgram program, char* log) = nullptr;
    HiprtcResult (*hiprtcGetCodeSize)(HiprtcProgram program, std::size_t* size_bytes) = nullptr;
    HiprtcResult (*hiprtcGetCode)(HiprtcProgram program, char* code) = nullptr;

    // "libhiprtc.so", then the versioned names and /opt/rocm/lib.
    static std::vector<std::string> default_candidates();
    // Opens the first loadable candidate and resolves every function; throws Error(not_found).
    static std::shared_ptr<const HiprtcApi> load(std::span<const std::string> candidates);

    const std::string& library_path() const { return library_path_; }
    int major_version() const { return major_; }
    int minor_version() const { return minor_; }
    std::string describe(HiprtcResult result) const;

private:
    explicit HiprtcApi(DynamicLibrary library);

    DynamicLibrary library_;
    std::string library_path_;
    int major_ = 0;
    int minor_ = 0;
};

}  // namespace mqajit
