// NVRTC through dlopen, no GPU needed: CUBINs for sm_90a and sm_80 with parsed ptxas usage, in-memory
// headers and extra options, compile errors carrying the log, and the ptxas log parser on samples.

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "mqajit/error.hpp"
#include "runtime/compiler_nvrtc.hpp"
#include "tests/support.hpp"

using namespace mqajit;

namespace {

constexpr const char* kAddOne = R"(
extern "C" __global__ void add_one(float* data, int count) {
    __shared__ float staged[128];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    staged[threadIdx.x] = i < count ? data[i] : 0.0f;
    __syncthreads();
    if (i < count) data[i] = staged[threadIdx.x] + 1.0f;
}
)";

const NvrtcCompiler& compiler() {
    static const NvrtcCompiler instance(NvrtcApi::load(NvrtcApi::default_candidates()));
    return instance;
}

CompileRequest request_for(std::string source, std::string arch, std::string kernel = "add_one") {
    CompileRequest request;
    request.source = std::move(source);
    request.source_name = "test_kernel.cu";
    request.kernel_name = std::move(kernel);
    request.arch = std::move(arch);
    return request;
}

bool is_elf(const std::vector<char>& binary) { return binary.size() > 4 && std::memcmp(binary.data(), "\x7f" "ELF", 4) == 0; }

}  // namespace

TEST_CASE("nvrtc: loads by dlopen and reports its version") {
    CHECK(compiler().name() == "nvrtc");
    const std::string version = compiler().version();
    CHECK(version.find('.') != std::string::npos);
    CHECK(std::stoi(version) >= 12);
    const auto options = compiler().base_options("sm_90a");
    CHECK(options.front() == "-arch=sm_90a");
    CHECK(std::find(options.begin(), options.end(), "--ptxas-options=-v") != options.end());
}

TEST_CASE("nvrtc: compiles a kernel to a CUBIN for sm_90a and sm_80 with its resource usage") {
    for (const std::string arch : {"sm_90a", "sm_80"}) {
        CAPTURE(arch);
        const auto start = std::chrono::steady_clock::now();
        const CompileResult result = compiler().compile(request_for(kAddOne, arch));
        const double elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        MESSAGE(fmt::format("{}: {} bytes in {:.1f} ms, {} registers", arch, result.binary.size(), elapsed_ms,
                            result.usage.registers));
        CHECK(is_elf(result.binary));
        CHECK(result.log.find(fmt::format("Compiling entry function 'add_one' for '{}'", arch)) != std::string::npos);
        CHECK(result.usage.registers > 0);
        CHECK(result.usage.shared_bytes == 128 * 4);
        CHECK(result.usage.spill_store_bytes == 0);
        CHECK(result.usage.spill_load_bytes == 0);
        CHECK(result.usage.stack_bytes == 0);
    }
}

TEST_CASE("nvrtc: in-memory headers and the request's options reach the compiler") {
    const std::string source = R"(
#include "tile_config.cuh"
static_assert(kTileRows == ROWS, "the header and the option disagree");
extern "C" __global__ void tiled(float* data) { data[threadIdx.x] = kTileRows; }
)";
    const EmbeddedFile headers[] = {{"tile_config.cuh", "#pragma once\nconstexpr int kTileRows = 64;\n"}};
    CompileRequest request = request_for(source, "sm_90a", "tiled");
    request.headers = headers;
    request.options = {"-DROWS=64"};
    CHECK(is_elf(compiler().compile(request).binary));

    request.options = {"-DROWS=32"};
    CHECK_THROWS_AS(compiler().compile(request), Error);
    request.options = {"-DROWS=64"};
    request.headers = {};
    CHECK_THROWS_AS(compiler().compile(request), Error);
}

TEST_CASE("nvrtc: a syntax error throws compile_failed carrying the compiler's log") {
    const std::string broken = "extern \"C\" __global__ void broken(float* x) { x[0] = undeclared_name + ; }";
    try {
        compiler().compile(request_for(broken, "sm_90a", "broken"));
        FAIL("a broken kernel compiled");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::compile_failed);
        const std::string message = e.what();
        CHECK(message.find("test_kernel.cu") != std::string::npos);
        CHECK(message.find("undeclared_name") != std::string::npos);
        CHECK(message.find("error") != std::string::npos);
        CHECK(message.find("-arch=sm_90a") != std::string::npos);
    }
}

TEST_CASE("nvrtc: only NVIDIA archs are accepted") {
    try {
        compiler().compile(request_for(kAddOne, "gfx950"));
        FAIL("NVRTC accepted an AMD arch");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::invalid_argument);
    }
}

TEST_CASE("nvrtc: the toolkit's libnvrtc loads by absolute path and finds its builtins") {
    const std::string toolkit_copy = NvrtcApi::default_candidates().back();
    if (!std::filesystem::exists(toolkit_copy)) MQAJIT_SKIP("no toolkit NVRTC at " + toolkit_copy);
    const NvrtcCompiler by_path(NvrtcApi::load(std::vector<std::string>{toolkit_copy}));
    CHECK(is_elf(by_path.compile(request_for(kAddOne, "sm_90a")).binary));
}

TEST_CASE("nvrtc: a missing library is reported with every path tried") {
    try {
        NvrtcApi::load(std::vector<std::string>{"/nonexistent/libnvrtc.so", "/also/missing/libnvrtc.so.13"});
        FAIL("a missing NVRTC loaded");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::not_found);
        const std::string message = e.what();
        CHECK(message.find("/nonexistent/libnvrtc.so") != std::string::npos);
        CHECK(message.find("/also/missing/libnvrtc.so.13") != std::string::npos);
        CHECK(message.find("MQAJIT_NVRTC_LIBRARY") != std::string::npos);
    }
}

TEST_CASE("ptxas usage: one kernel, as NVRTC writes it") {
    const std::string log = "ptxas info    : 0 bytes gmem\n"
                            "ptxas info    : Compiling entry function 'mqa' for 'sm_90a'\n"
                            "ptxas info    : Function properties for mqa\n"
                            "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
                            "ptxas info    : Used 168 registers, used 1 barriers, 32 bytes smem, 400 bytes cmem[0]\n"
                            "ptxas info    : Compile time = 2.176 ms\n";
    const ResourceUsage usage = parse_ptxas_usage(log);
    CHECK(usage.registers == 168);
    CHECK(usage.shared_bytes == 32);
    CHECK(usage.stack_bytes == 16);
    CHECK(usage.spill_store_bytes == 8);
    CHECK(usage.spill_load_bytes == 12);
    CHECK(usage.spills());
}

TEST_CASE("ptxas usage: several functions, chosen by name or else by most registers") {
    const std::string log = "ptxas info    : Compiling entry function 'small' for 'sm_80'\n"
                            "ptxas info    : Function properties for small\n"
                            "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                            "ptxas info    : Used 24 registers, 360 bytes cmem[0]\n"
                            "ptxas info    : Function properties for helper\n"
                            "    64 bytes stack frame, 64 bytes spill stores, 64 bytes spill loads\n"
                            "ptxas info    : Compiling entry function 'big' for 'sm_80'\n"
                            "ptxas info    : Function properties for big\n"
                            "    0 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
                            "ptxas info    : Used 255 registers, used 1 barriers, 49152 bytes smem, 400 bytes cmem[0]\n";
    const ResourceUsage small = parse_ptxas_usage(log, "small");
    CHECK(small.registers == 24);
    CHECK(small.shared_bytes == 0);  // no "smem" on its line
    CHECK_FALSE(small.spills());

    const ResourceUsage largest = parse_ptxas_usage(log);
    CHECK(largest.registers == 255);
    CHECK(largest.shared_bytes == 49152);
    CHECK(largest.spill_store_bytes == 4);

    CHECK(parse_ptxas_usage(log, "not_in_log").registers == 255);
}

TEST_CASE("ptxas usage: a log without ptxas lines leaves every field unknown") {
    const ResourceUsage usage = parse_ptxas_usage(std::string("warning: something unrelated\n"));
    CHECK(usage.registers == -1);
    CHECK(usage.shared_bytes == -1);
    CHECK(usage.stack_bytes == -1);
    CHECK_FALSE(usage.spills());
    CHECK(parse_ptxas_usage(std::string()).registers == -1);
}
