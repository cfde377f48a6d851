#pragma once
// The CUDA driver API as a struct of function pointers, loaded with dlopen so libmqajit needs no
// libcuda at link time. <cuda.h> and <cudaTypedefs.h> are included for their types only.

#include <cuda.h>
#include <cudaTypedefs.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/dynamic_library.hpp"

namespace mqajit {

// Every driver entry point mqajit calls, with the CUDA version of the ABI it is called with.
// NOTES: each pointer is typed by cudaTypedefs.h's PFN_<name>_v<version> and fetched with
// cuGetProcAddress at that same version, so type and function always agree. The plain cuda.h
// prototype is no guide: at CUDA 13.0, cuGetProcAddress("cuCtxSynchronize") returns the variant
// that takes a CUcontext, while cuda.h still declares cuCtxSynchronize(void).
#define MQAJIT_CUDA_DRIVER_FUNCTIONS(X)                                                                 \
    X(cuInit, 2000) X(cuDriverGetVersion, 2020) X(cuGetErrorName, 6000) X(cuGetErrorString, 6000)        \
    X(cuDeviceGetCount, 2000) X(cuDeviceGet, 2000) X(cuDeviceGetName, 2000)                              \
    X(cuDeviceGetAttribute, 2000) X(cuDevicePrimaryCtxRetain, 7000) X(cuDevicePrimaryCtxRelease, 11000)  \
    X(cuCtxGetCurrent, 4000) X(cuCtxSetCurrent, 4000) X(cuCtxGetDevice, 2000) X(cuCtxSynchronize, 2000)  \
    X(cuModuleLoadData, 2000) X(cuModuleUnload, 2000) X(cuModuleGetFunction, 2000)                       \
    X(cuFuncSetAttribute, 9000) X(cuFuncGetAttribute, 2020) X(cuLaunchKernel, 4000)                      \
    X(cuLaunchKernelEx, 11060) X(cuTensorMapEncodeTiled, 12000)                                          \
    X(cuMemAlloc, 3020) X(cuMemFree, 3020) X(cuMemcpyHtoD, 3020) X(cuMemcpyHtoDAsync, 3020)              \
    X(cuMemcpyDtoH, 3020) X(cuMemcpyDtoD, 3020) X(cuMemsetD8, 3020) X(cuMemsetD8Async, 3020)             \
    X(cuMemsetD32, 3020) X(cuMemsetD32Async, 3020)                                                       \
    X(cuStreamCreate, 2000) X(cuStreamDestroy, 4000) X(cuStreamSynchronize, 2000)                        \
    X(cuStreamWaitEvent, 3020) X(cuEventCreate, 2000) X(cuEventRecord, 2000)                             \
    X(cuEventSynchronize, 2000) X(cuEventElapsedTime, 2000) X(cuEventDestroy, 4000)

class CudaDriverApi {
public:
    // Members are named like the driver functions (cuda.h may rename some, e.g. cuMemAlloc to
    // cuMemAlloc_v2, consistently everywhere).
#define MQAJIT_CUDA_DECLARE_POINTER(function, version) PFN_##function##_v##version function = nullptr;
    MQAJIT_CUDA_DRIVER_FUNCTIONS(MQAJIT_CUDA_DECLARE_POINTER)
#undef MQAJIT_CUDA_DECLARE_POINTER

    // settings().cuda_driver_library when set; else "libcuda.so.1", "libcuda.so", then the usual
    // absolute locations of the driver.
    static std::vector<std::string> default_candidates();
    // Takes the first candidate that loads and provides every function, skipping the CUDA stub
    // library and drivers that are too old. Throws Error(not_found) with every candidate and why it
    // was passed over. Does not call cuInit.
    static std::shared_ptr<const CudaDriverApi> load(std::span<const std::string> candidates);

    // The file that was loaded.
    const std::string& library_path() const { return library_path_; }
    // "CUDA_ERROR_OUT_OF_MEMORY (out of memory)"; safe for any value.
    std::string describe(CUresult result) const;

private:
    explicit CudaDriverApi(DynamicLibrary library);
    // Fills every function pointer; returns why the library is unusable, or "" when it is usable.
    std::string resolve_functions();

    DynamicLibrary library_;
    std::string library_path_;
};

// Throws Error(driver) naming the call, the error and what to do, unless result is CUDA_SUCCESS.
void cuda_check(const CudaDriverApi& api, CUresult result, std::string_view call);

// Turns a driver version number (13000) into "13.0".
std::string format_cuda_version(int version);

}  // namespace mqajit
