#include "runtime/hip_api.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.hpp"

namespace mqajit {
namespace {

template <typename Function>
void resolve(const DynamicLibrary& library, const char* name, Function& pointer, std::vector<std::string>& missing) {
    pointer = reinterpret_cast<Function>(library.symbol(name));
    if (pointer == nullptr) missing.emplace_back(name);
}

}  // namespace

std::vector<std::string> HipApi::default_candidates() {
    return {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so"};
}

HipApi::HipApi(DynamicLibrary library) : library_(std::move(library)), library_path_(library_.resolved_path()) {}

std::shared_ptr<const HipApi> HipApi::load(std::span<const std::string> candidates) {
    auto api = std::shared_ptr<HipApi>(new HipApi(DynamicLibrary::open_first(
        candidates, "HIP runtime (libamdhip64.so)", "install ROCm's HIP runtime to run on AMD GPUs")));
    std::vector<std::string> missing;
    resolve(api->library_, "hipInit", api->hipInit, missing);
    resolve(api->library_, "hipDriverGetVersion", api->hipDriverGetVersion, missing);
    resolve(api->library_, "hipGetDeviceCount", api->hipGetDeviceCount, missing);
    resolve(api->library_, "hipDeviceGetName", api->hipDeviceGetName, missing);
    resolve(api->library_, "hipDeviceGetAttribute", api->hipDeviceGetAttribute, missing);
    resolve(api->library_, "hipModuleLoadData", api->hipModuleLoadData, missing);
    resolve(api->library_, "hipModuleUnload", api->hipModuleUnload, missing);
    resolve(api->library_, "hipModuleGetFunction", api->hipModuleGetFunction, missing);
    resolve(api->library_, "hipModuleLaunchKernel", api->hipModuleLaunchKernel, missing);
    resolve(api->library_, "hipGetErrorString", api->hipGetErrorString, missing);
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
