// The HIP backend on a machine without ROCm (this one): one-line status, no device, clear refusals,
// and the offline clang compiler (library and CLI) still turns HIP source into an AMD code object.

#include <doctest/doctest.h>

#include <cstring>
#include <optional>
#include <string>

#include "mqajit/error.hpp"
#include "runtime/backend.hpp"
#include "runtime/compiler_clang_hip.hpp"
#include "runtime/hip_api.hpp"
#include "runtime/hip_backend.hpp"
#include "runtime/hiprtc_api.hpp"
#include "tests/error_kind.hpp"
#include "tests/support.hpp"

using namespace mqajit;

namespace {

HipBackend backend_without_runtime() {
    return HipBackend({.runtime = {"/nonexistent/libamdhip64.so"},
                       .hiprtc = {"/nonexistent/libhiprtc.so"},
                       .clang = ClangHipCompiler::default_candidates()});
}

// The installed clang-22, or nullopt (with the reason in `why`) where it is not installed.
std::optional<ClangHipCompiler> installed_clang(std::string* why) {
    try {
        return ClangHipCompiler();
    } catch (const Error& e) {
        *why = e.what();
        return std::nullopt;
    }
}

// Declares `compiler`, the installed clang-22; skips the test case without one.
#define MQAJIT_REQUIRE_CLANG()                               \
    std::string mqajit_no_clang;                             \
    const auto compiler = installed_clang(&mqajit_no_clang); \
    if (!compiler) MQAJIT_SKIP(mqajit_no_clang)

constexpr const char* kAddOne = R"(
extern "C" __attribute__((global)) void add_one(float* data) {
    data[__builtin_amdgcn_workitem_id_x()] += 1.0f;
}
)";

CompileRequest request_for(const char* source, const std::string& arch) {
    return CompileRequest{.source = source, .source_name = "add_one.hip", .kernel_name = "add_one", .arch = arch,
                          .options = {}, .headers = {}};
}

}  // namespace

TEST_CASE("hip backend: without a runtime library the status is one line and devices are refused") {
    HipBackend backend = backend_without_runtime();
    CHECK(backend.name() == "hip");
    CHECK(backend.vendor() == Vendor::amd);
    const DriverStatus status = backend.driver_status();
    CHECK_FALSE(status.available);
    CHECK(status.message.starts_with("no HIP runtime: "));
    CHECK(status.message.find("/nonexistent/libamdhip64.so") != std::string::npos);
    CHECK(status.message.find('\n') == std::string::npos);
    CHECK(backend.device_count() == 0);
    CHECK(mqajit::testing::error_kind_of([&] { backend.open_device(0); }) == ErrorKind::not_found);
    CHECK(mqajit::testing::error_kind_of([&] { backend.current_device(); }) == ErrorKind::not_found);
    CHECK(mqajit::testing::error_kind_of([&] { backend.open_device(-1); }) == ErrorKind::invalid_argument);
}

TEST_CASE("hip backend: AMD archs get the HIP backend, whose compiler needs no GPU") {
    Backend& backend = backend_for(Arch::parse("gfx950"));
    CHECK(backend.name() == "hip");
    CHECK(&backend == &backend_for(Arch::parse("gfx942:sramecc+:xnack-")));
    CHECK(&backend == &backend_for(Vendor::amd));
    MQAJIT_REQUIRE_CLANG();
    CHECK(backend.compiler().name() == "clang-hip");
    CHECK(backend.compiler().version().starts_with("22."));
}

TEST_CASE("hip backend: on a machine without ROCm the library starts and says so in one line") {
    // The process-wide backend with the default search (libamdhip64.so, .so.7, .so.6, /opt/rocm/lib).
    Backend& backend = backend_for(Vendor::amd);
    const DriverStatus status = backend.driver_status();
    if (status.available) MQAJIT_SKIP("this machine has a HIP runtime with a device: " + status.message);
    CHECK(status.message.find('\n') == std::string::npos);
    CHECK((status.message.starts_with("no HIP runtime: ") || status.message.starts_with("HIP runtime found")));
    CHECK(backend.device_count() == 0);
    // Dispatch picks a backend with a device; with none the first this build has (CUDA where it is
    // built), whose error says why; runtime_status() then gives every backend's reason.
    if (!live_driver_status().available) {
        CHECK(&live_backend() == all_backends().front());
        CHECK(live_driver_status().message.starts_with("no GPU: "));
        CHECK(live_driver_status().message.find(status.message) != std::string::npos);
    }
}

TEST_CASE("hip backend: the CLI compiles AMD code objects on a machine without ROCm") {
    MQAJIT_REQUIRE_CLANG();
    const mqajit::testing::TempDir cache("hip-no-runtime-cli");
    std::string output;
    const int exit_code = mqajit::testing::run_command(
        "MQAJIT_CACHE_DIR=" + cache.path().string() + " " + mqajit::testing::cli_path().string() +
            " aot --arch gfx942:sramecc+:xnack- --variants mfma32x32x16_bkv64_r1_w4_lds2 --heads 32 --head-dim 64 2>&1",
        &output);
    INFO(output);
    CHECK(exit_code == 0);
    CHECK(output.find("1 of 1 kernel(s) ok") != std::string::npos);
}

TEST_CASE("hip api / hiprtc api: missing libraries are reported with every path tried") {
    const std::string missing_hip[] = {"/nonexistent/a/libamdhip64.so", "/nonexistent/b/libamdhip64.so"};
    try {
        HipApi::load(missing_hip);
        FAIL("loaded a HIP runtime from a path that does not exist");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::not_found);
        CHECK(std::string(e.what()).find("/nonexistent/a/libamdhip64.so") != std::string::npos);
        CHECK(std::string(e.what()).find("/nonexistent/b/libamdhip64.so") != std::string::npos);
    }
    const std::string missing_hiprtc[] = {"/nonexistent/libhiprtc.so"};
    CHECK(mqajit::testing::error_kind_of([&] { HiprtcApi::load(missing_hiprtc); }) == ErrorKind::not_found);
    // libc loads but is not HIP: every function is named as missing.
    const std::string libc[] = {"libc.so.6"};
    try {
        HipApi::load(libc);
        FAIL("libc passed for a HIP runtime");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::not_found);
        CHECK(std::string(e.what()).find("hipModuleLaunchKernel") != std::string::npos);
    }
}

TEST_CASE("clang-hip compiler: an unknown clang is not_found, naming what it tried") {
    const std::string candidates[] = {"/nonexistent/clang-22", "true"};
    try {
        ClangHipCompiler compiler(candidates);
        FAIL("a compiler was found among candidates that are not clang");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::not_found);
        CHECK(std::string(e.what()).find("/nonexistent/clang-22") != std::string::npos);
        CHECK(std::string(e.what()).find("true: not clang") != std::string::npos);
    }
}

TEST_CASE("clang-hip compiler: HIP source becomes an AMDGPU code object for gfx942 and gfx950, with usage") {
    MQAJIT_REQUIRE_CLANG();
    for (const char* arch : {"gfx942", "gfx950"}) {
        CAPTURE(arch);
        const CompileResult result = compiler->compile(request_for(kAddOne, arch));
        REQUIRE(result.binary.size() > 64);
        CHECK(std::memcmp(result.binary.data(), "\x7f" "ELF", 4) == 0);
        const auto machine = static_cast<unsigned char>(result.binary[18]) |
                             (static_cast<unsigned char>(result.binary[19]) << 8);
        CHECK(machine == 0xE0);  // EM_AMDGPU: a plain code object, not an offload bundle
        CHECK(result.usage.registers > 0);
        CHECK(result.usage.sgprs > 0);
        CHECK(result.usage.agprs == 0);
        CHECK(result.usage.vgpr_spills == 0);
        CHECK(result.usage.scratch_bytes == 0);
        CHECK_FALSE(result.usage.spills());
    }
    CHECK(mqajit::testing::error_kind_of([&] { compiler->compile(request_for(kAddOne, "sm_90a")); }) == ErrorKind::invalid_argument);
}

TEST_CASE("clang-hip compiler: a compile error is compile_failed with clang's full log") {
    MQAJIT_REQUIRE_CLANG();
    try {
        compiler->compile(request_for("extern \"C\" __attribute__((global)) void broken() { undefined_name(); }",
                                      "gfx950"));
        FAIL("broken source compiled");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::compile_failed);
        CHECK(std::string(e.what()).find("undefined_name") != std::string::npos);
        CHECK(std::string(e.what()).find("--offload-arch=gfx950") != std::string::npos);
    }
}

TEST_CASE("amdgpu resource usage: clang's remarks are read per function") {
    const std::string log = R"(k.hip:2:1: remark: Function Name: helper [-Rpass-analysis=kernel-resource-usage]
k.hip:2:1: remark:     TotalSGPRs: 10 [-Rpass-analysis=kernel-resource-usage]
k.hip:2:1: remark:     VGPRs: 200 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark: Function Name: my_kernel [-Rpass-analysis=kernel-resource-usage]
    9 | extern "C" __attribute__((global)) void my_kernel(MqaLogitsParams p) {
      | ^
k.hip:9:1: remark:     TotalSGPRs: 61 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     VGPRs: 164 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     AGPRs: 12 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     ScratchSize [bytes/lane]: 48 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     Dynamic Stack: False [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     Occupancy [waves/SIMD]: 3 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     SGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     VGPRs Spill: 7 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     LDS Size [bytes/block]: 1024 [-Rpass-analysis=kernel-resource-usage]
)";
    const ResourceUsage usage = parse_amdgpu_resource_usage(log, "my_kernel");
    CHECK(usage.registers == 164);
    CHECK(usage.agprs == 12);
    CHECK(usage.sgprs == 61);
    CHECK(usage.scratch_bytes == 48);
    CHECK(usage.sgpr_spills == 0);
    CHECK(usage.vgpr_spills == 7);
    CHECK(usage.shared_bytes == 1024);
    CHECK(usage.spills());

    // Without the name: the function with most VGPRs.
    CHECK(parse_amdgpu_resource_usage(log, "").registers == 200);
    CHECK(parse_amdgpu_resource_usage(log, "").sgprs == 10);
    // No remarks at all: nothing reported.
    const ResourceUsage none = parse_amdgpu_resource_usage("warning: something else\n", "my_kernel");
    CHECK(none.registers == -1);
    CHECK_FALSE(none.spills());
}
