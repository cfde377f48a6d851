#pragma once
// One vendor's runtime: a Compiler (no GPU needed) and, when a driver answers, Devices.
// backend_registry.cpp is the only file that names every backend.

#include <memory>
#include <string>
#include <vector>

#include "runtime/compiler.hpp"
#include "runtime/device.hpp"
#include "variants/arch.hpp"

namespace mqajit {

struct DriverStatus {
    bool available = false;
    std::string message;  // one line: "CUDA driver 580.159 with 1 device" or why there is none
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;    // "cuda", "hip"
    virtual Vendor vendor() const = 0;
    // Throws mqajit::Error(not_found) naming the library it could not open.
    virtual const Compiler& compiler() const = 0;
    virtual DriverStatus driver_status() const = 0;
    virtual int device_count() const = 0;    // 0 when no driver
    // The device `ordinal` (one object per ordinal, shared); throws Error(not_found) without a driver
    // and Error(invalid_argument) for an ordinal out of range.
    virtual std::shared_ptr<Device> open_device(int ordinal) = 0;
    // The device the calling thread's current context belongs to; with no current context, device
    // 0's is made current.
    virtual std::shared_ptr<Device> current_device() = 0;
};

// The backend that serves an arch ("sm_90a" -> cuda, "gfx950" -> hip).
Backend& backend_for(const Arch& arch);
Backend& backend_for(Vendor vendor);
// Every backend this build has.
std::vector<Backend*> all_backends();
// The backend whose driver sees a GPU, CUDA first; with none, CUDA's (whose errors say why).
Backend& live_backend();

}  // namespace mqajit
