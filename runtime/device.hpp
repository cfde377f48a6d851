#pragma once
// A Device exists only when a driver answered: arch, multiprocessor count, module load and launch.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "codegen/launch_plan.hpp"

// Declared at global scope in codegen/templates/mqa_logits_params.cuh (shared with device code).
struct MqaTensorMap;

namespace mqajit {

// A kernel function loaded into a device context; unloads its module when destroyed.
class LoadedKernel {
public:
    virtual ~LoadedKernel() = default;
    virtual std::string name() const = 0;
};

// Device memory, freed when the object goes away.
class DeviceBuffer {
public:
    virtual ~DeviceBuffer() = default;
    virtual void* data() const = 0;
    virtual std::size_t size() const = 0;  // bytes
};

// A device work queue; destroying it lets queued work finish first.
class DeviceStream {
public:
    virtual ~DeviceStream() = default;
    virtual void* handle() const = 0;  // a CUstream / hipStream_t, for Device calls and MqaLogitsOptions
};

// Times device work between two points of a stream with device events.
class EventTimer {
public:
    virtual ~EventTimer() = default;
    virtual void record_start(void* stream = nullptr) = 0;
    virtual void record_stop(void* stream = nullptr) = 0;
    // Waits for the stop point, then returns the device time between the two points.
    virtual double elapsed_ms() = 0;
};

class Device {
public:
    virtual ~Device() = default;
    virtual std::string arch() const = 0;        // "sm_90a", "gfx950"
    virtual std::string name() const = 0;        // "NVIDIA H200"
    virtual int ordinal() const = 0;
    virtual int multiprocessor_count() const = 0;  // SMs or CUs: the tuning table's cu_num
    virtual std::size_t max_shared_bytes_per_block() const = 0;  // opt-in maximum
    // What a kernel family's plan() needs to know of this device.
    DeviceLimits limits() const { return {multiprocessor_count(), max_shared_bytes_per_block()}; }
    virtual std::string driver_version() const = 0;

    // Loads a binary and finds `kernel_name` in it; throws mqajit::Error(driver) on failure.
    virtual std::shared_ptr<LoadedKernel> load(std::span<const char> binary, const std::string& kernel_name) = 0;
    // Launches `kernel` with one by-value argument of `argument_bytes` bytes on `stream`.
    virtual void launch(const LoadedKernel& kernel, const LaunchConfig& config, void* stream,
                        const void* argument, std::size_t argument_bytes) = 0;
    // Fills `out` with a hardware tensor-copy descriptor; throws Error(unsupported) where there is none.
    virtual void encode_tensor_map(const TensorMapRequest& request, MqaTensorMap& out) const = 0;
    // Makes this device's context current on the calling thread.
    virtual void make_current() = 0;

    // Memory and timing for tests and tools. A null stream is the default (legacy) stream, on which
    // calls without a stream are ordered; copy_to_host returns once the data has arrived.
    virtual std::unique_ptr<DeviceBuffer> allocate(std::size_t bytes) = 0;
    virtual void copy_to_device(void* dst, const void* src, std::size_t bytes, void* stream = nullptr) = 0;
    virtual void copy_to_host(void* dst, const void* src, std::size_t bytes) = 0;
    virtual void copy_on_device(void* dst, const void* src, std::size_t bytes) = 0;
    virtual void fill_u32(void* dst, std::uint32_t value, std::size_t count, void* stream = nullptr) = 0;
    virtual void fill_bytes(void* dst, std::uint8_t value, std::size_t count, void* stream = nullptr) = 0;
    // Waits for `stream`, or for all of this device's work when stream is null.
    virtual void synchronize(void* stream = nullptr) = 0;
    virtual std::unique_ptr<DeviceStream> create_stream() = 0;
    virtual std::unique_ptr<EventTimer> create_timer() = 0;
};

}  // namespace mqajit
