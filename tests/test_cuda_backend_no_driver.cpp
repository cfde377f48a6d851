// The CUDA backend on a machine without a usable driver: one-line status, no device, no crash, and
// the compiler still works. Also the pure helpers of the CUDA device (arch names, TMA request rules).

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "mqajit/error.hpp"
#include "runtime/backend.hpp"
#include "runtime/cuda_backend.hpp"
#include "runtime/dynamic_library.hpp"
#include "tests/error_kind.hpp"
#include "tests/support.hpp"

using namespace mqajit;

namespace {

CudaBackend backend_without_driver() {
    return CudaBackend({.driver = {"/nonexistent/libcuda.so.1"}, .nvrtc = NvrtcApi::default_candidates()});
}

}  // namespace

MQAJIT_TEST_CHILD("cuda-driver-status", [](const std::vector<std::string>&) {
    const DriverStatus status = backend_for(Vendor::nvidia).driver_status();
    std::printf("available=%d message=%s\n", status.available ? 1 : 0, status.message.c_str());
    return 0;
});

TEST_CASE("cuda backend: without a driver library the status is one line and devices are refused") {
    CudaBackend backend = backend_without_driver();
    const DriverStatus status = backend.driver_status();
    CHECK_FALSE(status.available);
    CHECK(status.message.starts_with("no CUDA driver: tried "));
    CHECK(status.message.find("/nonexistent/libcuda.so.1") != std::string::npos);
    CHECK(status.message.find('\n') == std::string::npos);
    CHECK(backend.device_count() == 0);
    CHECK(mqajit::testing::error_kind_of([&] { backend.open_device(0); }) == ErrorKind::not_found);
    CHECK(mqajit::testing::error_kind_of([&] { backend.current_device(); }) == ErrorKind::not_found);
    CHECK(backend.name() == "cuda");
    CHECK(backend.compiler().name() == "nvrtc");  // compiling needs no driver
}

TEST_CASE("cuda backend: the CUDA stub library is recognised, not used as a driver") {
    const std::filesystem::path stub =
        std::filesystem::path(NvrtcApi::default_candidates().back()).parent_path() / "stubs" / "libcuda.so";
    if (!std::filesystem::exists(stub)) MQAJIT_SKIP("no CUDA stub library at " + stub.string());
    CudaBackend backend({.driver = {stub.string()}, .nvrtc = NvrtcApi::default_candidates()});
    const DriverStatus status = backend.driver_status();
    CHECK_FALSE(status.available);
    CHECK(status.message.find("stub") != std::string::npos);
    CHECK(status.message.find('\n') == std::string::npos);
    CHECK(backend.device_count() == 0);
}

TEST_CASE("cuda driver api: a stub library is passed over for the next candidate") {
    const std::filesystem::path stub =
        std::filesystem::path(NvrtcApi::default_candidates().back()).parent_path() / "stubs" / "libcuda.so";
    if (!std::filesystem::exists(stub)) MQAJIT_SKIP("no CUDA stub library at " + stub.string());
    try {
        // libc loads but is no driver: reaching it shows the stub did not end the search.
        CudaDriverApi::load(std::vector<std::string>{stub.string(), "libc.so.6"});
        FAIL("neither candidate is a driver, yet one loaded");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::not_found);
        const std::string message = e.what();
        CHECK(message.find("stub library") != std::string::npos);
        CHECK(message.find("libc.so.6") != std::string::npos);
        CHECK(message.find("cuGetProcAddress_v2") != std::string::npos);
    }
}

TEST_CASE("cuda backend: MQAJIT_CUDA_DRIVER_LIBRARY pointing nowhere leaves the process running") {
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    std::string output;
    const int code = testing::run_command(
        "MQAJIT_CUDA_DRIVER_LIBRARY=/nonexistent/libcuda.so.1 '" + self + "' --mqajit-child=cuda-driver-status", &output);
    INFO(output);
    CHECK(code == 0);
    CHECK(output.find("available=0") != std::string::npos);
    CHECK(output.find("/nonexistent/libcuda.so.1") != std::string::npos);
}

TEST_CASE("cuda backend: a missing NVRTC is reported by compiler(), every time, naming the paths") {
    CudaBackend backend({.driver = {"/nonexistent/libcuda.so.1"}, .nvrtc = {"/nonexistent/libnvrtc.so"}});
    for (int attempt = 0; attempt < 2; ++attempt) {
        try {
            backend.compiler();
            FAIL("compiler() without NVRTC did not throw");
        } catch (const Error& e) {
            CHECK(e.kind() == ErrorKind::not_found);
            CHECK(std::string(e.what()).find("/nonexistent/libnvrtc.so") != std::string::npos);
        }
    }
}

TEST_CASE("cuda driver api: a missing library names every candidate") {
    try {
        CudaDriverApi::load(std::vector<std::string>{"/nonexistent/one.so", "/nonexistent/two.so"});
        FAIL("a missing driver loaded");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::not_found);
        const std::string message = e.what();
        CHECK(message.find("/nonexistent/one.so") != std::string::npos);
        CHECK(message.find("/nonexistent/two.so") != std::string::npos);
        CHECK(message.find("MQAJIT_CUDA_DRIVER_LIBRARY") != std::string::npos);
    }
}

TEST_CASE("dynamic library: the first loadable candidate wins and its real path is known") {
    const std::vector<std::string> candidates = {"/nonexistent/libc.so.6", "libc.so.6"};
    const DynamicLibrary libc = DynamicLibrary::open_first(candidates, "the C library", "");
    CHECK(libc.name() == "libc.so.6");
    CHECK(std::filesystem::path(libc.resolved_path()).is_absolute());
    CHECK(libc.symbol("malloc") != nullptr);
    CHECK(libc.symbol("no_such_symbol_in_libc") == nullptr);
}

TEST_CASE("backend registry: NVIDIA archs get the CUDA backend, AMD archs the HIP backend") {
    CHECK(backend_for(Vendor::nvidia).name() == "cuda");
    CHECK(backend_for(Vendor::nvidia).vendor() == Vendor::nvidia);
    CHECK(&backend_for(Vendor::nvidia) == &backend_for(Vendor::nvidia));
    CHECK(backend_for(Vendor::amd).name() == "hip");
    const auto backends = all_backends();
    REQUIRE(backends.size() == 2);
    CHECK(backends[0]->name() == "cuda");
    CHECK(backends[1]->name() == "hip");
}

TEST_CASE("cuda device: archs from compute capability use the arch-specific form from 9.0 on") {
    CHECK(arch_for_compute_capability(8, 0) == "sm_80");
    CHECK(arch_for_compute_capability(8, 6) == "sm_86");
    CHECK(arch_for_compute_capability(8, 9) == "sm_89");
    CHECK(arch_for_compute_capability(9, 0) == "sm_90a");
    CHECK(arch_for_compute_capability(10, 0) == "sm_100a");
    CHECK(arch_for_compute_capability(12, 0) == "sm_120a");
}

TEST_CASE("cuda device: tensor map requests that break TMA rules are refused before the driver") {
    alignas(256) static unsigned char storage[256];
    TensorMapRequest valid;
    valid.base = storage;
    valid.rank = 2;
    valid.dims[0] = 128;
    valid.dims[1] = 4096;
    valid.strides_bytes[0] = 128;
    valid.box[0] = 128;
    valid.box[1] = 64;
    valid.element_bytes = 1;
    valid.swizzle_bytes = 128;
    CHECK_NOTHROW(check_tensor_map_request(valid));

    auto refused = [&](auto change) {
        TensorMapRequest request = valid;
        change(request);
        return mqajit::testing::error_kind_of([&] { check_tensor_map_request(request); }) == ErrorKind::invalid_argument;
    };
    CHECK(refused([](TensorMapRequest& r) { r.rank = 4; }));
    CHECK(refused([](TensorMapRequest& r) { r.element_bytes = 2; }));
    CHECK(refused([](TensorMapRequest& r) { r.swizzle_bytes = 48; }));
    CHECK(refused([&](TensorMapRequest& r) { r.base = storage + 8; }));
    CHECK(refused([](TensorMapRequest& r) { r.base = nullptr; }));
    CHECK(refused([](TensorMapRequest& r) { r.box[1] = 300; }));
    CHECK(refused([](TensorMapRequest& r) { r.dims[1] = 0; }));
    CHECK(refused([](TensorMapRequest& r) { r.strides_bytes[0] = 136 + 4; }));
    CHECK(refused([](TensorMapRequest& r) { r.swizzle_bytes = 64; }));  // 128-byte rows exceed a 64-byte swizzle
    CHECK(refused([](TensorMapRequest& r) { r.box[0] = 8; }));         // 8 bytes: not a multiple of 16
}
