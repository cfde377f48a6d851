#pragma once
// What the problems uploaded to a device share: a host vector copied into new device memory, a
// float buffer filled with the poison pattern, and a float buffer copied back.

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/device.hpp"

namespace mqajit::tools {

template <typename T>
std::unique_ptr<DeviceBuffer> upload(Device& device, const std::vector<T>& values) {
    auto buffer = device.allocate(values.size() * sizeof(T));
    device.copy_to_device(buffer->data(), values.data(), values.size() * sizeof(T));
    return buffer;
}

// Fills every float of `buffer` with `bits` (kPoisonBits: unwritten outputs then show).
inline void fill_floats(Device& device, const DeviceBuffer& buffer, std::uint32_t bits, void* stream = nullptr) {
    device.fill_u32(buffer.data(), bits, buffer.size() / sizeof(float), stream);
}

inline std::vector<float> download_floats(Device& device, const DeviceBuffer& buffer) {
    std::vector<float> out(buffer.size() / sizeof(float));
    device.copy_to_host(out.data(), buffer.data(), buffer.size());
    return out;
}

}  // namespace mqajit::tools
