#include "runtime/cuda_driver_api.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.hpp"
#include "core/settings.hpp"

namespace mqajit {
namespace {

std::string_view advice_for(CUresult result) {
    switch (result) {
        case CUDA_ERROR_OUT_OF_MEMORY:
            return "free device memory (other processes or caches may hold it) or run a smaller problem";
        case CUDA_ERROR_NO_BINARY_FOR_GPU:
        case CUDA_ERROR_INVALID_IMAGE:
        case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
            return "the kernel binary does not match this GPU or driver; clear the kernel cache "
                   "(<MQAJIT_CACHE_DIR>/kernels) and check that MQAJIT_ARCH, if set, names this GPU's arch";
        case CUDA_ERROR_INVALID_CONTEXT:
        case CUDA_ERROR_CONTEXT_IS_DESTROYED:
            return "make the device's primary context current on this thread before calling mqajit "
                   "(torch.cuda.set_device or cudaSetDevice do that)";
        case CUDA_ERROR_INVALID_HANDLE:
            return "a stream, event or kernel belongs to another context or was destroyed; use objects of "
                   "the context that is current";
        case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
            return "the kernel needs more registers or shared memory than a block may have here; pick "
                   "another variant";
        case CUDA_ERROR_ILLEGAL_ADDRESS:
        case CUDA_ERROR_LAUNCH_FAILED:
        case CUDA_ERROR_MISALIGNED_ADDRESS:
        case CUDA_ERROR_ILLEGAL_INSTRUCTION:
            return "a kernel faulted and the context is no longer usable; restart the process, and report "
                   "the variant and shape (run with MQAJIT_LOG_LEVEL=debug to see them)";
        case CUDA_ERROR_NO_DEVICE:
            return "no CUDA device is visible; check CUDA_VISIBLE_DEVICES and nvidia-smi";
        case CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER:
        case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
        case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
            return "the NVIDIA driver is too old for this CUDA version; update the driver";
        case CUDA_ERROR_STUB_LIBRARY:
            return "the CUDA stub library (meant for linking only) was loaded; install the NVIDIA driver or "
                   "point MQAJIT_CUDA_DRIVER_LIBRARY at the real libcuda.so.1";
        case CUDA_ERROR_NOT_INITIALIZED:
        case CUDA_ERROR_DEINITIALIZED:
            return "the driver is not initialised or is shutting down; call mqajit between start-up and exit";
        default:
            return "see the CUDA driver API documentation for this error, and run with MQAJIT_LOG_LEVEL=debug";
    }
}

// NOTES: cuGetProcAddress_v2 (driver 12.0+) is the one symbol taken with dlsym. Asking it for each
// function at CUDA_VERSION returns the ABI version cuda.h declared (cuMemAlloc_v2, ...), which dlsym
// by plain name would not. The driver 12.0 floor costs nothing: cuTensorMapEncodeTiled needs it too.
using GetProcAddress = decltype(&::cuGetProcAddress);
constexpr const char* kGetProcAddressSymbol = "cuGetProcAddress_v2";

}  // namespace

std::vector<std::string> CudaDriverApi::default_candidates() {
    if (const auto& configured = settings().cuda_driver_library) return {*configured};
    return {"libcuda.so.1", "libcuda.so"};
}

CudaDriverApi::CudaDriverApi(DynamicLibrary library)
    : library_(std::move(library)), library_path_(library_.resolved_path()) {}

std::shared_ptr<const CudaDriverApi> CudaDriverApi::load(std::span<const std::string> candidates) {
    auto api = std::shared_ptr<CudaDriverApi>(new CudaDriverApi(
        DynamicLibrary::open_first(
        candidates, "the CUDA driver library",
        "install the NVIDIA driver, or set MQAJIT_CUDA_DRIVER_LIBRARY to the path of libcuda.so.1",
        DynamicLibrary::Unload::never)));
    auto get_proc_address = reinterpret_cast<GetProcAddress>(api->library_.symbol(kGetProcAddressSymbol));
    MQAJIT_CHECK_KIND(not_found, get_proc_address != nullptr,
                      "the CUDA driver {} does not export {}: it is older than CUDA 12.0; update the NVIDIA "
                      "driver (mqajit needs 12.0 or newer)",
                      api->library_path_, kGetProcAddressSymbol);

    std::vector<std::string> missing;
    CUresult first_failure = CUDA_SUCCESS;
    auto resolve = [&](const char* name, void** slot) {
        CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        const CUresult result = get_proc_address(name, slot, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
        if (result != CUDA_SUCCESS && first_failure == CUDA_SUCCESS) first_failure = result;
        if (result != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || *slot == nullptr) {
            *slot = nullptr;
            missing.emplace_back(name);
        }
    };
#define MQAJIT_CUDA_RESOLVE(function) resolve(#function, reinterpret_cast<void**>(&api->function));
    MQAJIT_CUDA_DRIVER_FUNCTIONS(MQAJIT_CUDA_RESOLVE)
#undef MQAJIT_CUDA_RESOLVE

    if (first_failure == CUDA_ERROR_STUB_LIBRARY) {
        MQAJIT_FAIL(not_found, "{} is the CUDA stub library, not a driver: {}", api->library_path_,
                    advice_for(CUDA_ERROR_STUB_LIBRARY));
    }
    MQAJIT_CHECK_KIND(not_found, missing.empty(),
                      "the CUDA driver {} lacks {} (asked for CUDA {} versions); update the NVIDIA driver",
                      api->library_path_, fmt::join(missing, ", "), format_cuda_version(CUDA_VERSION));
    return api;
}

std::string CudaDriverApi::describe(CUresult result) const {
    const char* name = nullptr;
    const char* text = nullptr;
    if (cuGetErrorName == nullptr || cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr) {
        return fmt::format("CUresult {}", static_cast<int>(result));
    }
    if (cuGetErrorString == nullptr || cuGetErrorString(result, &text) != CUDA_SUCCESS || text == nullptr) {
        return name;
    }
    return fmt::format("{} ({})", name, text);
}

void cuda_check(const CudaDriverApi& api, CUresult result, std::string_view call) {
    if (result == CUDA_SUCCESS) [[likely]] return;
    MQAJIT_FAIL(driver, "{} failed: {}; {}", call, api.describe(result), advice_for(result));
}

std::string format_cuda_version(int version) {
    return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

}  // namespace mqajit
