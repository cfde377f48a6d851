#include "runtime/nvrtc_api.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.hpp"
#include "core/log.hpp"
#include "core/settings.hpp"

namespace mqajit {

std::vector<std::string> NvrtcApi::default_candidates() {
    if (const auto& configured = settings().nvrtc_library) return {*configured};
    return {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", MQAJIT_CUDA_LIBRARY_DIR "/libnvrtc.so"};
}

NvrtcApi::NvrtcApi(DynamicLibrary library) : library_(std::move(library)), library_path_(library_.resolved_path()) {}

std::shared_ptr<const NvrtcApi> NvrtcApi::load(std::span<const std::string> candidates) {
    auto api = std::shared_ptr<NvrtcApi>(new NvrtcApi(DynamicLibrary::open_first(
        candidates, "NVRTC (libnvrtc.so)",
        "install the CUDA toolkit's NVRTC (e.g. cuda-nvrtc-13-0), or set MQAJIT_NVRTC_LIBRARY to the path of "
        "libnvrtc.so")));
    std::vector<std::string> missing;
#define MQAJIT_NVRTC_RESOLVE(function) api->library_.resolve(#function, api->function, missing);
    MQAJIT_NVRTC_FUNCTIONS(MQAJIT_NVRTC_RESOLVE)
#undef MQAJIT_NVRTC_RESOLVE
    MQAJIT_CHECK_KIND(not_found, missing.empty(), "NVRTC at {} lacks {}; install NVRTC 12.0 or newer",
                      api->library_path_, fmt::join(missing, ", "));

    const nvrtcResult version = api->nvrtcVersion(&api->major_, &api->minor_);
    MQAJIT_CHECK_KIND(not_found, version == NVRTC_SUCCESS, "nvrtcVersion failed in {}: {}", api->library_path_,
                      api->describe(version));
    // NOTES: libnvrtc allocates 72,704 bytes when loaded (its own libstdc++'s emergency exception
    // pool) and never frees them; unloaded at exit, that block reads as a leak to LeakSanitizer,
    // with its stack attributed to whatever is mapped there later. Kept loaded, like the drivers.
    api->library_.keep_loaded();

    // NOTES: libnvrtc has no RUNPATH and opens libnvrtc-builtins.so.<major>.<minor> by name at the
    // first compile, so a libnvrtc found outside the loader's path would fail there. Loading the
    // builtins from libnvrtc's own folder first makes that by-name open find the loaded copy.
    const std::filesystem::path folder = std::filesystem::path(api->library_path_).parent_path();
    const std::filesystem::path builtins =
        folder / fmt::format("libnvrtc-builtins.so.{}.{}", api->major_, api->minor_);
    std::error_code ignored;
    if (!folder.empty() && std::filesystem::exists(builtins, ignored)) {
        try {
            api->builtins_.emplace(DynamicLibrary::open_global(builtins.string()));
        } catch (const Error& e) {
            log().debug("NVRTC will look up its builtins by itself: {}", e.what());
        }
    }
    return api;
}

std::string NvrtcApi::describe(nvrtcResult result) const {
    const char* text = nvrtcGetErrorString != nullptr ? nvrtcGetErrorString(result) : nullptr;
    if (text == nullptr) return fmt::format("nvrtcResult {}", static_cast<int>(result));
    return text;
}

}  // namespace mqajit
