#pragma once
// The HIP objects a HipDevice hands out. HIP keeps one current device per host thread; each object
// makes its device current around the calls that need it and puts the previous one back.

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/device.hpp"
#include "runtime/hip_api.hpp"

namespace mqajit {

// The runtime and the ordinal every HIP object of one device shares.
struct HipDeviceHandle {
    std::shared_ptr<const HipApi> api;
    int ordinal = 0;
};

// Makes `device` current for one scope and restores the previous device; nothing when it already is.
class ScopedHipDevice {
public:
    explicit ScopedHipDevice(const HipDeviceHandle& device);  // throws Error(driver)
    ~ScopedHipDevice();
    ScopedHipDevice(const ScopedHipDevice&) = delete;
    ScopedHipDevice& operator=(const ScopedHipDevice&) = delete;

    // For destructors: switches if it can and never throws.
    static ScopedHipDevice without_throwing(const HipDeviceHandle& device) noexcept;

private:
    ScopedHipDevice(const HipApi& api, int previous, bool switched) noexcept
        : api_(&api), previous_(previous), switched_(switched) {}

    const HipApi* api_;
    int previous_ = 0;
    bool switched_ = false;
};

class HipKernel final : public LoadedKernel {
public:
    // Loads `image` (an AMDGPU code object, copied and kept) on the device and finds `name` in it;
    // throws Error(not_found) for a missing function and Error(driver) for other failures.
    HipKernel(HipDeviceHandle device, std::span<const char> image, std::string name);
    ~HipKernel() override;
    HipKernel(const HipKernel&) = delete;
    HipKernel& operator=(const HipKernel&) = delete;

    std::string name() const override { return name_; }
    HipFunction function() const { return function_; }
    int ordinal() const { return device_.ordinal; }

private:
    HipDeviceHandle device_;
    std::string name_;
    std::vector<char> image_;
    HipModule module_ = nullptr;
    HipFunction function_ = nullptr;
};

class HipBuffer final : public DeviceBuffer {
public:
    HipBuffer(HipDeviceHandle device, std::size_t bytes);  // throws Error(driver)
    ~HipBuffer() override;
    HipBuffer(const HipBuffer&) = delete;
    HipBuffer& operator=(const HipBuffer&) = delete;

    void* data() const override { return pointer_; }
    std::size_t size() const override { return bytes_; }

private:
    HipDeviceHandle device_;
    void* pointer_ = nullptr;
    std::size_t bytes_;
};

class HipStreamObject final : public DeviceStream {
public:
    explicit HipStreamObject(HipDeviceHandle device);  // throws Error(driver)
    ~HipStreamObject() override;
    HipStreamObject(const HipStreamObject&) = delete;
    HipStreamObject& operator=(const HipStreamObject&) = delete;

    void* handle() const override { return stream_; }  // a hipStream_t

private:
    HipDeviceHandle device_;
    HipStream stream_ = nullptr;
};

class HipEventTimer final : public EventTimer {
public:
    explicit HipEventTimer(HipDeviceHandle device);  // throws Error(driver)
    ~HipEventTimer() override;
    HipEventTimer(const HipEventTimer&) = delete;
    HipEventTimer& operator=(const HipEventTimer&) = delete;

    void record_start(void* stream) override;
    void record_stop(void* stream) override;
    double elapsed_ms() override;

private:
    HipDeviceHandle device_;
    HipEvent start_ = nullptr;
    HipEvent stop_ = nullptr;
    bool started_ = false;
    bool stopped_ = false;
};

}  // namespace mqajit
