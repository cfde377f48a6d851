#pragma once
// The CUDA driver API as a struct of function pointers, loaded with dlopen so libmqajit needs no
// libcuda at link time. <cuda.h> is included for its types only.

#include <cuda.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/dynamic_library.hpp"

namespace mqajit {

// Every driver entry point mqajit calls. Each member is typed from cuda.h's declaration, which
// cuda.h maps to the ABI version of CUDA_VERSION (cuMemAlloc -> cuMemAlloc_v2, ...); the loader asks
// the driver for that same version, so the pointer type and the function always agree.
#define MQAJIT_CUDA_DRIVER_FUNCTIONS(X)                                                              \
    X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString)                             \
    X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute)                     \
    X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)                                          \
    X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxGetDevice) X(cuCtxSynchronize)                       \
    X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction)                                      \
    X(cuFuncSetAttribute) X(cuFuncGetAttribute) X(cuLaunchKernel) X(cuTensorMapEncodeTiled)           \
    X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoH) X(cuMemcpyDtoD)   \
    X(cuMemsetD8) X(cuMemsetD8Async) X(cuMemsetD32) X(cuMemsetD32Async)                               \
    X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamWaitEvent)                  \
    X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) X(cuEventDestroy)

class CudaDriverApi {
public:
#define MQAJIT_CUDA_DECLARE_POINTER(function) decltype(&::function) function = nullptr;
    MQAJIT_CUDA_DRIVER_FUNCTIONS(MQAJIT_CUDA_DECLARE_POINTER)
#undef MQAJIT_CUDA_DECLARE_POINTER

    // settings().cuda_driver_library when set, else "libcuda.so.1", "libcuda.so".
    static std::vector<std::string> default_candidates();
    // Opens the first loadable candidate and resolves every function. Throws Error(not_found) naming
    // every path tried, or every function the driver lacks. Does not call cuInit.
    static std::shared_ptr<const CudaDriverApi> load(std::span<const std::string> candidates);

    // The file that was loaded.
    const std::string& library_path() const { return library_path_; }
    // "CUDA_ERROR_OUT_OF_MEMORY (out of memory)"; safe for any value.
    std::string describe(CUresult result) const;

private:
    explicit CudaDriverApi(DynamicLibrary library);

    DynamicLibrary library_;
    std::string library_path_;
};

// Throws Error(driver) naming the call, the error and what to do, unless result is CUDA_SUCCESS.
void cuda_check(const CudaDriverApi& api, CUresult result, std::string_view call);

// Turns a driver version number (13000) into "13.0".
std::string format_cuda_version(int version);

}  // namespace mqajit
