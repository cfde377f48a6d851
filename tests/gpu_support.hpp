#pragma once
// GPU tests run on the live backend's device (NVIDIA or AMD), and tests of one vendor's backend
// on that backend; both are reported as skipped where there is none.

#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "mqajit/error.hpp"
#include "runtime/backend.hpp"
#include "tests/support.hpp"

namespace mqajit::testing {

// The live backend's current device, or null (with the reason in `why`) on a machine without a GPU.
inline Device* test_device(std::string* why) {
    static std::string reason;
    static Device* device = []() -> Device* {
        const DriverStatus status = live_driver_status();
        if (!status.available) {
            reason = status.message;
            return nullptr;
        }
        return live_backend().current_device().get();
    }();
    *why = reason;
    return device;
}

// This build's backend for `vendor`, or null (with the reason in `why`) where the build has none
// (the CUDA backend is left out with MQAJIT_WITH_CUDA=OFF).
inline Backend* built_backend(Vendor vendor, std::string* why) {
    try {
        return &backend_for(vendor);
    } catch (const Error& e) {
        *why = e.what();
        return nullptr;
    }
}

}  // namespace mqajit::testing

// Declares `backend`, this build's backend for `vendor`; skips the test case where it has none.
#define MQAJIT_REQUIRE_BACKEND(vendor)                                                   \
    std::string mqajit_no_backend_reason;                                                \
    ::mqajit::Backend* backend = ::mqajit::testing::built_backend(vendor, &mqajit_no_backend_reason); \
    if (backend == nullptr) MQAJIT_SKIP(mqajit_no_backend_reason)

// Declares `gpu`, the device to test on; skips the test case when there is no GPU.
#define MQAJIT_REQUIRE_GPU()                                                   \
    std::string mqajit_no_gpu_reason;                                          \
    ::mqajit::Device* gpu = ::mqajit::testing::test_device(&mqajit_no_gpu_reason); \
    if (gpu == nullptr) MQAJIT_SKIP("no GPU on this machine (" + mqajit_no_gpu_reason + ")")
