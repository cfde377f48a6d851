#include "runtime/cuda_context.hpp"

#include <fmt/format.h>

namespace mqajit {

CudaPrimaryContext::CudaPrimaryContext(std::shared_ptr<const CudaDriverApi> api, int ordinal)
    : api_(std::move(api)), ordinal_(ordinal) {
    cuda_check(*api_, api_->cuDeviceGet(&device_, ordinal), fmt::format("cuDeviceGet({})", ordinal));
    cuda_check(*api_, api_->cuDevicePrimaryCtxRetain(&context_, device_),
               fmt::format("cuDevicePrimaryCtxRetain(device {})", ordinal));
}

CudaPrimaryContext::~CudaPrimaryContext() {
    // NOTES: errors are ignored: at process exit the driver may already be shutting down, and a
    // destructor has no one to report to.
    if (context_ != nullptr) api_->cuDevicePrimaryCtxRelease(device_);
}

ScopedContext::ScopedContext(const CudaPrimaryContext& target) : api_(&target.api()) {
    CUcontext current = nullptr;
    cuda_check(*api_, api_->cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    if (current == target.context()) return;
    cuda_check(*api_, api_->cuCtxSetCurrent(target.context()),
               fmt::format("cuCtxSetCurrent(device {} primary context)", target.ordinal()));
    previous_ = current;
    switched_ = true;
}

ScopedContext ScopedContext::without_throwing(const CudaPrimaryContext& target) noexcept {
    const CudaDriverApi& api = target.api();
    CUcontext current = nullptr;
    if (api.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current == target.context()) {
        return ScopedContext(api, nullptr, false);
    }
    const bool switched = api.cuCtxSetCurrent(target.context()) == CUDA_SUCCESS;
    return ScopedContext(api, current, switched);
}

ScopedContext::~ScopedContext() {
    if (switched_) api_->cuCtxSetCurrent(previous_);
}

}  // namespace mqajit
