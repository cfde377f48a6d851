#include "runtime/hip_api.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.hpp"

namespace mqajit {

std::vector<std::string> HipApi::default_candidates() {
    return {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "/opt/rocm/lib/libamdhip64.so"};
}

HipApi::HipApi(DynamicLibrary library) : library_(std::move(library)), library_path_(library_.resolved_path()) {}

std::shared_ptr<const HipApi> HipApi::load(std::span<const std::string> candidates) {
    auto api = std::shared_ptr<HipApi>(new HipApi(DynamicLibrary::open_first(
        candidates, "HIP runtime (libamdhip64.so)", "install ROCm's HIP runtime to run on AMD GPUs")));
    // NOTES: ROCm keeps threads and atexit work of its own, like the CUDA driver: unloading it while
    // they run would crash at exit.
    api->library_.keep_loaded();
    std::vector<std::string> missing;
    const DynamicLibrary& library = api->library_;
    library.resolve("hipInit", api->hipInit, missing);
    library.resolve("hipDriverGetVersion", api->hipDriverGetVersion, missing);
    library.resolve("hipRuntimeGetVersion", api->hipRuntimeGetVersion, missing);
    library.resolve("hipGetDeviceCount", api->hipGetDeviceCount, missing);
    library.resolve("hipGetDevice", api->hipGetDevice, missing);
    library.resolve("hipSetDevice", api->hipSetDevice, missing);
    library.resolve("hipDeviceGetName", api->hipDeviceGetName, missing);
    library.resolve("hipDeviceGetAttribute", api->hipDeviceGetAttribute, missing);
    library.resolve("hipGetDevicePropertiesR0600", api->hipGetDevicePropertiesR0600, missing);
    library.resolve("hipModuleLoadData", api->hipModuleLoadData, missing);
    library.resolve("hipModuleUnload", api->hipModuleUnload, missing);
    library.resolve("hipModuleGetFunction", api->hipModuleGetFunction, missing);
    library.resolve("hipModuleLaunchKernel", api->hipModuleLaunchKernel, missing);
    library.resolve("hipMalloc", api->hipMalloc, missing);
    library.resolve("hipFree", api->hipFree, missing);
    library.resolve("hipMemcpyHtoD", api->hipMemcpyHtoD, missing);
    library.resolve("hipMemcpyHtoDAsync", api->hipMemcpyHtoDAsync, missing);
    library.resolve("hipMemcpyDtoH", api->hipMemcpyDtoH, missing);
    library.resolve("hipMemcpyDtoD", api->hipMemcpyDtoD, missing);
    library.resolve("hipMemsetD32", api->hipMemsetD32, missing);
    library.resolve("hipMemsetD32Async", api->hipMemsetD32Async, missing);
    library.resolve("hipMemsetD8", api->hipMemsetD8, missing);
    library.resolve("hipMemsetD8Async", api->hipMemsetD8Async, missing);
    library.resolve("hipDeviceSynchronize", api->hipDeviceSynchronize, missing);
    library.resolve("hipStreamCreate", api->hipStreamCreate, missing);
    library.resolve("hipStreamDestroy", api->hipStreamDestroy, missing);
    library.resolve("hipStreamSynchronize", api->hipStreamSynchronize, missing);
    library.resolve("hipEventCreate", api->hipEventCreate, missing);
    library.resolve("hipEventDestroy", api->hipEventDestroy, missing);
    library.resolve("hipEventRecord", api->hipEventRecord, missing);
    library.resolve("hipEventSynchronize", api->hipEventSynchronize, missing);
    library.resolve("hipEventElapsedTime", api->hipEventElapsedTime, missing);
    library.resolve("hipGetErrorString", api->hipGetErrorString, missing);
    MQAJIT_CHECK_KIND(not_found, missing.empty(), "the HIP runtime at {} lacks {}; install ROCm 6.0 or newer",
                      api->library_path_, fmt::join(missing, ", "));
    return api;
}

std::string HipApi::describe(HipError error) const {
    const char* text = hipGetErrorString != nullptr ? hipGetErrorString(error) : nullptr;
    if (text == nullptr) return fmt::format("hipError_t {}", error);
    return fmt::format("{} ({})", text, error);
}

void hip_check(const HipApi& api, HipError result, std::string_view what) {
    if (result == kHipSuccess) [[likely]] return;
    MQAJIT_FAIL(driver, "{} failed: {}", what, api.describe(result));
}

std::string format_hip_version(int version) {
    return fmt::format("{}.{}.{}", version / 10000000, version / 100000 % 100, version % 100000);
}

}  // namespace mqajit
