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

// NOTES: cuGetProcAddress_v2 (driver 12.0+) is the one symbol taken with dlsym; every other one is
// asked of it at the version its pointer type names. The driver 12.0 floor costs nothing:
// cuTensorMapEncodeTiled needs it too.
using GetProcAddress = PFN_cuGetProcAddress_v12000;
constexpr const char* kGetProcAddressSymbol = "cuGetProcAddress_v2";

}  // namespace

std::vector<std::string> CudaDriverApi::default_candidates() {
    if (const auto& configured = settings().cuda_driver_library) return {*configured};
    // NOTES: the absolute paths come after the loader's search because the CUDA stub library's
    // soname is libcuda.so.1 too: once it is in the process (or first on the search path),
    // "libcuda.so.1" finds the stub, which load() passes over.
    return {"libcuda.so.1", "libcuda.so", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1",
            "/usr/lib64/libcuda.so.1"};
}

CudaDriverApi::CudaDriverApi(DynamicLibrary library)
    : library_(std::move(library)), library_path_(library_.resolved_path()) {}

std::string CudaDriverApi::resolve_functions() {
    auto get_proc_address = reinterpret_cast<GetProcAddress>(library_.symbol(kGetProcAddressSymbol));
    if (get_proc_address == nullptr) {
        return fmt::format("exports no {}: the driver is older than CUDA 12.0, which mqajit needs", kGetProcAddressSymbol);
    }
    std::vector<std::string> missing;
    CUresult first_failure = CUDA_SUCCESS;
    auto resolve = [&](const char* name, int version, void** slot) {
        CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        const CUresult result =
            get_proc_address(name, slot, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status);
        if (result != CUDA_SUCCESS && first_failure == CUDA_SUCCESS) first_failure = result;
        if (result != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || *slot == nullptr) {
            *slot = nullptr;
            missing.emplace_back(name);
        }
    };
#define MQAJIT_CUDA_RESOLVE(function, version) resolve(#function, version, reinterpret_cast<void**>(&function));
    MQAJIT_CUDA_DRIVER_FUNCTIONS(MQAJIT_CUDA_RESOLVE)
#undef MQAJIT_CUDA_RESOLVE

    if (first_failure == CUDA_ERROR_STUB_LIBRARY) return "is the CUDA stub library (for linking only), not a driver";
    if (!missing.empty()) {
        return fmt::format("lacks {}; the driver is too old", fmt::join(missing, ", "));
    }
    return {};
}

std::shared_ptr<const CudaDriverApi> CudaDriverApi::load(std::span<const std::string> candidates) {
    MQAJIT_CHECK_KIND(internal, !candidates.empty(), "no candidate paths given for the CUDA driver");
    std::vector<std::string> tried;
    for (const std::string& candidate : candidates) {
        std::string reason;
        auto library = DynamicLibrary::try_open(candidate, reason);
        if (!library) {
            tried.push_back(fmt::format("{}: {}", candidate, reason));
            continue;
        }
        auto api = std::shared_ptr<CudaDriverApi>(new CudaDriverApi(std::move(*library)));
        reason = api->resolve_functions();
        if (reason.empty()) {
            api->library_.keep_loaded();
            return api;
        }
        const std::string& found = api->library_path_;
        tried.push_back(found == candidate ? fmt::format("{} {}", candidate, reason)
                                           : fmt::format("{} ({}) {}", candidate, found, reason));
    }
    MQAJIT_FAIL(not_found,
                "no CUDA driver: tried {}; install or update the NVIDIA driver, or set "
                "MQAJIT_CUDA_DRIVER_LIBRARY to the path of the real libcuda.so.1",
                fmt::join(tried, "; "));
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
