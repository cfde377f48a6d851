#include "runtime/hiprtc_api.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.hpp"

namespace mqajit {

std::vector<std::string> HiprtcApi::default_candidates() {
    return {"libhiprtc.so", "libhiprtc.so.6", "libhiprtc.so.5", "/opt/rocm/lib/libhiprtc.so"};
}

HiprtcApi::HiprtcApi(DynamicLibrary library) : library_(std::move(library)), library_path_(library_.resolved_path()) {}

std::shared_ptr<const HiprtcApi> HiprtcApi::load(std::span<const std::string> candidates) {
    auto api = std::shared_ptr<HiprtcApi>(new HiprtcApi(DynamicLibrary::open_first(
        candidates, "hiprtc (libhiprtc.so)", "install ROCm's hiprtc to compile for AMD GPUs at run time")));
    std::vector<std::string> missing;
    api->library_.resolve("hiprtcVersion", api->hiprtcVersion, missing);
    api->library_.resolve("hiprtcGetErrorString", api->hiprtcGetErrorString, missing);
    api->library_.resolve("hiprtcCreateProgram", api->hiprtcCreateProgram, missing);
    api->library_.resolve("hiprtcDestroyProgram", api->hiprtcDestroyProgram, missing);
    api->library_.resolve("hiprtcCompileProgram", api->hiprtcCompileProgram, missing);
    api->library_.resolve("hiprtcGetProgramLogSize", api->hiprtcGetProgramLogSize, missing);
    api->library_.resolve("hiprtcGetProgramLog", api->hiprtcGetProgramLog, missing);
    api->library_.resolve("hiprtcGetCodeSize", api->hiprtcGetCodeSize, missing);
    api->library_.resolve("hiprtcGetCode", api->hiprtcGetCode, missing);
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
