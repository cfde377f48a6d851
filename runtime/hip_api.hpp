#pragma once
// The HIP runtime (libamdhip64) as a struct of function pointers, loaded with dlopen, so one
// libmqajit runs on machines with and without ROCm. No HIP header is needed: the few types the
// calls use are declared here (HIP's C ABI: hipError_t is an int enum, handles are pointers).

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/dynamic_library.hpp"

namespace mqajit {

using HipError = int;  // hipError_t
inline constexpr HipError kHipSuccess = 0;
inline constexpr HipError kHipErrorNoDevice = 100;  // hipErrorNoDevice
inline constexpr HipError kHipErrorNotFound = 500;  // hipErrorNotFound (hipModuleGetFunction)
using HipModule = struct ihipModule_t*;
using HipFunction = struct ihipModuleSymbol_t*;
using HipStream = struct ihipStream_t*;
using HipEvent = struct ihipEvent_t*;

// hipDeviceAttribute_t values of ROCm 6 (hip_runtime_api.h).
inline constexpr int kHipAttributeMultiprocessorCount = 63;
inline constexpr int kHipAttributeMaxSharedMemoryPerBlock = 74;

class HipApi {
public:
    HipError (*hipInit)(unsigned flags) = nullptr;
    HipError (*hipDriverGetVersion)(int* version) = nullptr;
    HipError (*hipRuntimeGetVersion)(int* version) = nullptr;
    HipError (*hipGetDeviceCount)(int* count) = nullptr;
    HipError (*hipGetDevice)(int* ordinal) = nullptr;
    HipError (*hipSetDevice)(int ordinal) = nullptr;
    HipError (*hipDeviceGetName)(char* name, int length, int device) = nullptr;
    HipError (*hipDeviceGetAttribute)(int* value, int attribute, int device) = nullptr;
    // Fills a hipDeviceProp_tR0600 (ROCm 6's layout, read by runtime/hip_device_query.cpp).
    HipError (*hipGetDevicePropertiesR0600)(void* properties, int device) = nullptr;
    HipError (*hipModuleLoadData)(HipModule* module, const void* image) = nullptr;
    HipError (*hipModuleUnload)(HipModule module) = nullptr;
    HipError (*hipModuleGetFunction)(HipFunction* function, HipModule module, const char* name) = nullptr;
    HipError (*hipModuleLaunchKernel)(HipFunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                                      unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared_bytes,
                                      HipStream stream, void** arguments, void** extra) = nullptr;
    HipError (*hipMalloc)(void** pointer, std::size_t bytes) = nullptr;
    HipError (*hipFree)(void* pointer) = nullptr;
    HipError (*hipMemcpyHtoD)(void* dst, const void* src, std::size_t bytes) = nullptr;
    HipError (*hipMemcpyHtoDAsync)(void* dst, const void* src, std::size_t bytes, HipStream stream) = nullptr;
    HipError (*hipMemcpyDtoH)(void* dst, const void* src, std::size_t bytes) = nullptr;
    HipError (*hipMemcpyDtoD)(void* dst, const void* src, std::size_t bytes) = nullptr;
    HipError (*hipMemsetD32)(void* dst, int value, std::size_t count) = nullptr;
    HipError (*hipMemsetD32Async)(void* dst, int value, std::size_t count, HipStream stream) = nullptr;
    HipError (*hipMemsetD8)(void* dst, unsigned char value, std::size_t count) = nullptr;
    HipError (*hipMemsetD8Async)(void* dst, unsigned char value, std::size_t count, HipStream stream) = nullptr;
    HipError (*hipDeviceSynchronize)() = nullptr;
    HipError (*hipStreamCreate)(HipStream* stream) = nullptr;
    HipError (*hipStreamDestroy)(HipStream stream) = nullptr;
    HipError (*hipStreamSynchronize)(HipStream stream) = nullptr;
    HipError (*hipEventCreate)(HipEvent* event) = nullptr;
    HipError (*hipEventDestroy)(HipEvent event) = nullptr;
    HipError (*hipEventRecord)(HipEvent event, HipStream stream) = nullptr;
    HipError (*hipEventSynchronize)(HipEvent event) = nullptr;
    HipError (*hipEventElapsedTime)(float* ms, HipEvent start, HipEvent stop) = nullptr;
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

// Throws Error(driver) "<what> failed: <error text>" unless `result` is kHipSuccess.
void hip_check(const HipApi& api, HipError result, std::string_view what);

// "6.2.41133" from hipRuntimeGetVersion's 60241133 (major * 10^7 + minor * 10^5 + patch).
std::string format_hip_version(int version);

}  // namespace mqajit
