#include "runtime/hip_resources.hpp"

#include <fmt/format.h>

#include "core/check.hpp"

namespace mqajit {

ScopedHipDevice::ScopedHipDevice(const HipDeviceHandle& device) : api_(device.api.get()) {
    hip_check(*api_, api_->hipGetDevice(&previous_), "hipGetDevice");
    if (previous_ == device.ordinal) return;
    hip_check(*api_, api_->hipSetDevice(device.ordinal), fmt::format("hipSetDevice({})", device.ordinal));
    switched_ = true;
}

ScopedHipDevice ScopedHipDevice::without_throwing(const HipDeviceHandle& device) noexcept {
    const HipApi& api = *device.api;
    int previous = 0;
    if (api.hipGetDevice(&previous) != kHipSuccess || previous == device.ordinal) return {api, previous, false};
    return {api, previous, api.hipSetDevice(device.ordinal) == kHipSuccess};
}

ScopedHipDevice::~ScopedHipDevice() {
    if (switched_) api_->hipSetDevice(previous_);
}

HipKernel::HipKernel(HipDeviceHandle device, std::span<const char> image, std::string name)
    : device_(std::move(device)), name_(std::move(name)), image_(image.begin(), image.end()) {
    const HipApi& api = *device_.api;
    const ScopedHipDevice scope(device_);
    // NOTES: the image is kept for the module's lifetime: some HIP versions read it lazily, at the
    // first launch, instead of copying it in hipModuleLoadData.
    hip_check(api, api.hipModuleLoadData(&module_, image_.data()),
              fmt::format("hipModuleLoadData(code object holding {}, device {})", name_, device_.ordinal));
    const HipError found = api.hipModuleGetFunction(&function_, module_, name_.c_str());
    if (found != kHipSuccess) {
        api.hipModuleUnload(module_);
        MQAJIT_CHECK_KIND(not_found, found != kHipErrorNotFound,
                          "the code object has no kernel named '{}'; the extern \"C\" name in the generated source "
                          "and the requested kernel name must agree",
                          name_);
        hip_check(api, found, fmt::format("hipModuleGetFunction({})", name_));
    }
}

HipKernel::~HipKernel() {
    const auto scope = ScopedHipDevice::without_throwing(device_);
    device_.api->hipModuleUnload(module_);
}

HipBuffer::HipBuffer(HipDeviceHandle device, std::size_t bytes) : device_(std::move(device)), bytes_(bytes) {
    MQAJIT_CHECK(bytes > 0, "cannot allocate 0 bytes of device memory; ask for at least one byte");
    const ScopedHipDevice scope(device_);
    hip_check(*device_.api, device_.api->hipMalloc(&pointer_, bytes),
              fmt::format("hipMalloc({} bytes on device {})", bytes, device_.ordinal));
}

HipBuffer::~HipBuffer() {
    const auto scope = ScopedHipDevice::without_throwing(device_);
    device_.api->hipFree(pointer_);
}

HipStreamObject::HipStreamObject(HipDeviceHandle device) : device_(std::move(device)) {
    const ScopedHipDevice scope(device_);
    // NOTES: hipStreamCreate gives a blocking stream, ordered with the null stream, so a copy made
    // without a stream is done before work queued here starts (as CudaStream does).
    hip_check(*device_.api, device_.api->hipStreamCreate(&stream_), "hipStreamCreate");
}

HipStreamObject::~HipStreamObject() {
    const auto scope = ScopedHipDevice::without_throwing(device_);
    device_.api->hipStreamDestroy(stream_);
}

HipEventTimer::HipEventTimer(HipDeviceHandle device) : device_(std::move(device)) {
    const HipApi& api = *device_.api;
    const ScopedHipDevice scope(device_);
    hip_check(api, api.hipEventCreate(&start_), "hipEventCreate(start)");
    const HipError created = api.hipEventCreate(&stop_);
    if (created != kHipSuccess) api.hipEventDestroy(start_);
    hip_check(api, created, "hipEventCreate(stop)");
}

HipEventTimer::~HipEventTimer() {
    const auto scope = ScopedHipDevice::without_throwing(device_);
    device_.api->hipEventDestroy(start_);
    device_.api->hipEventDestroy(stop_);
}

void HipEventTimer::record_start(void* stream) {
    const ScopedHipDevice scope(device_);
    hip_check(*device_.api, device_.api->hipEventRecord(start_, static_cast<HipStream>(stream)), "hipEventRecord(start)");
    started_ = true;
    stopped_ = false;
}

void HipEventTimer::record_stop(void* stream) {
    MQAJIT_CHECK(started_, "EventTimer::record_stop was called before record_start; record the start first");
    const ScopedHipDevice scope(device_);
    hip_check(*device_.api, device_.api->hipEventRecord(stop_, static_cast<HipStream>(stream)), "hipEventRecord(stop)");
    stopped_ = true;
}

double HipEventTimer::elapsed_ms() {
    MQAJIT_CHECK(started_ && stopped_, "EventTimer::elapsed_ms needs record_start and then record_stop first");
    const HipApi& api = *device_.api;
    hip_check(api, api.hipEventSynchronize(stop_), "hipEventSynchronize(stop)");
    float milliseconds = 0.0f;
    hip_check(api, api.hipEventElapsedTime(&milliseconds, start_, stop_), "hipEventElapsedTime");
    return milliseconds;
}

}  // namespace mqajit
