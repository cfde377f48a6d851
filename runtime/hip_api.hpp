#pragma once
// The HIP runtime (libamdhip64) as a struct of function pointers, loaded with dlopen, so one
// libmqajit runs on machines with and without ROCm. No HIP header is needed: the few types the
// calls use are declared here (HIP's C ABI: hipError_t is an int enum, handles are pointers).

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/dynamic_library.hpp"

namespace mqajit {

using HipError = int;  // hipError_t
inline constexpr HipError kHipSuccess = 0;
inline constexpr HipError kHipErrorNoDevice = 100;  // hipErrorNoDevice
using HipModule = struct ihipModule_t*;
using HipFunction = struct ihipModuleSymbol_t*;
using HipStream = struct ihipStream_t*;

class HipApi {
public:
    HipError (*hipInit)(unsigned flags) = nullptr;
    HipError (*hipDriverGetVersion)(int* version) = nullptr;
    HipError (*hipGetDeviceCount)(int* count) = nullptr;
    HipError (*hipDeviceGetName)(char* name, int length, int device) = nullptr;
    HipError (*hipDeviceGetAttribute)(int* value, int attribute, int device) = nullptr;
    HipError (*hipModuleLoadData)(HipModule* module, const void* image) = nullptr;
    HipError (*hipModuleUnload)(HipModule module) = nullptr;
    HipError (*hipModuleGetFunction)(HipFunction* function, HipModule module, const char* name) = nullptr;
    HipError (*hipModuleLaunchKernel)(HipFunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                                      unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared_bytes,
                                      HipStream stream, void** arguments, void** extra) = nullptr;
    const char* (*hipGetErrorString)(HipError error) = nullptr;

    // "libamdhip64.so", then the versioned names and /opt/rocm/lib.
    static std::vector<std::string> default_candidates();
    // Opens the first loadable candidate and resolves every function; throws Error(not_found) naming
    // every path tried, or every missing function.
    static std::shared_ptr<const HipApi> load(std::span<const std::string> candidates);

    const std::string& library_path() const { return library_path_; }
    std::string describe(HipError error) const;

private:
    explicit HipApi(DynamicLibrary library);

    DynamicLibrary library_;
    std::string library_path_;
};

}  // namespace mqajit
