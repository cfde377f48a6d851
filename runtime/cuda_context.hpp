#pragma once
// A device's primary context, retained for as long as anything (device, kernel, buffer) uses it.

#include <memory>

#include "runtime/cuda_driver_api.hpp"

namespace mqajit {

class CudaPrimaryContext {
public:
    // Retains device `ordinal`'s primary context; throws Error(driver) naming the failing call.
    CudaPrimaryContext(std::shared_ptr<const CudaDriverApi> api, int ordinal);
    ~CudaPrimaryContext();
    CudaPrimaryContext(const CudaPrimaryContext&) = delete;
    CudaPrimaryContext& operator=(const CudaPrimaryContext&) = delete;

    const CudaDriverApi& api() const { return *api_; }
    int ordinal() const { return ordinal_; }
    CUdevice device() const { return device_; }
    CUcontext context() const { return context_; }

private:
    std::shared_ptr<const CudaDriverApi> api_;
    int ordinal_;
    CUdevice device_ = 0;
    CUcontext context_ = nullptr;
};

// Makes a context current for one scope and puts the previous one back; does nothing when it is
// already current, which is the common case.
class ScopedContext {
public:
    explicit ScopedContext(const CudaPrimaryContext& target);  // throws Error(driver)
    ~ScopedContext();
    ScopedContext(const ScopedContext&) = delete;
    ScopedContext& operator=(const ScopedContext&) = delete;

    // For destructors: switches if it can and never throws.
    static ScopedContext without_throwing(const CudaPrimaryContext& target) noexcept;

private:
    ScopedContext(const CudaDriverApi& api, CUcontext previous, bool switched) noexcept
        : api_(&api), previous_(previous), switched_(switched) {}

    const CudaDriverApi* api_;
    CUcontext previous_ = nullptr;
    bool switched_ = false;
};

}  // namespace mqajit
