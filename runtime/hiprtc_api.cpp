#include "runtime/hiprtc_api.hpp"

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

std::vector<std::string> HiprtcApi::default_candidates() {
    return {"libhiprtc.so", "libhiprtc.so.6", "libhiprtc.so.5", "/opt/rocm/lib/libhiprtc.so"};
}

HiprtcApi::HiprtcApi(DynamicLibrary library) : library_(std::move(library)), library_path_(library_.resolved_path()) {}

std::shared_ptr<const HiprtcApi> HiprtcApi::load(std::span<const std::string> candidates) {
    auto api = std::shared_ptr<HiprtcApi>(new HiprtcApi(DynamicLibrary::open_first(
        candidates, "hiprtc (libhiprtc.so)", "install ROCm's hiprtc to compile for AMD GPUs at run time")));
    std::vector<std::string> missing;
    resolve(api->library_, "hiprtcVersion", api->hiprtcVersion, missing);
    resolve(api->library_, "hiprtcGetErrorString", api->hiprtcGetErrorString, missing);
    resolve(api->library_, "hiprtcCreateProgram", api->hiprtcCreateProgram, missing);
    resolve(api->library_, "hiprtcDestroyProgram", api->hiprtcDestroyProgram, missing);
    resolve(api->library_, "hiprtcCompileProgram", api->hiprtcCompileProgram, missing);
    resolve(api->library_, "hiprtcGetProgramLogSize", api->hiprtcGetProgramLogSize, missing);
    resolve(api->library_, "hiprtcGetProgramLog", api->hiprtcGetProgramLog, missing);
    resolve(api->library_, "hiprtcGetCodeSize", api->hiprtcGetCodeSize, missing);
    resolve(api->library_, "hiprtcGetCode", api->hiprtcGetCode, missing);
    MQAJIT_CHECK_KIND(not_found, missing.empty(), "hiprtc at {} lacks {}; install ROCm 6.0 or newer",
                      api->library_path_, fmt::join(missing, ", "));
    const HiprtcResult version = api->hiprtcVersion(&api->major_, &api->minor_);
    MQAJIT_CHECK_KIND(not_found, version == kHiprtcSuccess, "hiprtcVersion failed in {}: {}", api->library_path_,
                      api->describe(version));
    return api;
}

std::string HiprtcApi::describe(HiprtcResult result) const {
    const char* text = hiprtcGetErrorString != nullptr ? hiprtcGetErrorString(result) : nullptr;
    if (text == nullptr) return fmt::format("hiprtcResult {}", result);
    return text;
}

}  // namespace mqajit
