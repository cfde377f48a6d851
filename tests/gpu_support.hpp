#pragma once
// GPU tests skip on a machine without a GPU, saying so on one line.

#include <doctest/doctest.h>

#include <cstdio>

#include "runtime/backend.hpp"

namespace mqajit::testing {

inline Device* test_device() {
    static Device* device = [] () -> Device* {
        Backend& backend = backend_for(Vendor::nvidia);
        const DriverStatus status = backend.driver_status();
        if (!status.available) {
            std::printf("SKIPPED GPU tests: no GPU (%s)\n", status.message.c_str());
            return nullptr;
        }
        return backend.current_device().get();
    }();
    return device;
}

}  // namespace mqajit::testing

// Returns from the test case when there is no GPU (after the one-line notice).
#define MQAJIT_REQUIRE_GPU()                                                  \
    ::mqajit::Device* gpu = ::mqajit::testing::test_device();                 \
    if (gpu == nullptr) {                                                     \
        MESSAGE("skipped: no GPU on this machine");                           \
        return;                                                               \
    }
