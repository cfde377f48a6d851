#include "runtime/hip_api.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.hpp"

namespace mqajit {

std::vector<std::string> HipApi::default_candidates() {
    return {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so"};
}

HipApi::HipApi(DynamicLibrary library) : library_(std::move(library)), library_path_(library_.resolved_path()) {}

std::shared_ptr<const HipApi> HipApi::load(std::span<const std::string> candidates) {
    auto api = std::shared_ptr<HipApi>(new HipApi(DynamicLibrary::open_first(
        candidates, "HIP runtime (libamdhip64.so)", "install ROCm's HIP runtime to run on AMD GPUs")));
    std::vector<std::string> missing;
    api->library_.resolve("hipInit", api->hipInit, missing);
    api->library_.resolve("hipDriverGetVersion", api->hipDriverGetVersion, missing);
    api->library_.resolve("hipGetDeviceCount", api->hipGetDeviceCount, missing);
    api->library_.resolve("hipDeviceGetName", api->hipDeviceGetName, missing);
    api->library_.resolve("hipDeviceGetAttribute", api->hipDeviceGetAttribute, missing);
    api->library_.resolve("hipModuleLoadData", api->hipModuleLoadData, missing);
    api->library_.resolve("hipModuleUnload", api->hipModuleUnload, missing);
    api->library_.resolve("hipModuleGetFunction", api->hipModuleGetFunction, missing);
    api->library_.resolve("hipModuleLaunchKernel", api->hipModuleLaunchKernel, missing);
    api->library_.resolve("hipGetErrorString", api->hipGetErrorString, missing);
    MQAJIT_CHECK_KIND(not_found, missing.empty(), "the HIP runtime at {} lacks {}; install ROCm 6.0 or newer",
                      api->library_path_, fmt::join(missing, ", "));
    return api;
}

std::string HipApi::describe(HipError error) const {
    const char* text = hipGetErrorString != nullptr ? hipGetErrorString(error) : nullptr;
    if (text == nullptr) return fmt::format("hipError_t {}", error);
    return fmt::format("{} ({})", text, error);
}

}  // namespace mqajit
