// hiprtc at run time: missing, too old, compiling a generated gfx9 kernel for a full target ID, and
// failing with its log (the fake libhiprtc of tests/fake_hip/ stands in for ROCm's).

#include <doctest/doctest.h>

#include <string>

#include "mqajit/error.hpp"
#include "runtime/compiler_hiprtc.hpp"
#include "runtime/hip_code_object.hpp"
#include "runtime/hip_kernel_source.hpp"
#include "tests/error_kind.hpp"
#include "tests/hip_fakes.hpp"

using namespace mqajit;
using mqajit::testing::FakeRocm;

namespace {

const std::string kFakeHiprtc[] = {MQAJIT_FAKE_HIPRTC};

// A tuned-table variant of the target's processor (the MFMA shapes differ between gfx942 and gfx950).
CompileRequest gfx9_request(const std::string& target_id) {
    const Arch arch = Arch::parse(target_id);
    const char* variant = arch.number == 950 ? "mfma32x32x64_bkv128_r2_w4_lds3" : "mfma32x32x16_bkv64_r1_w4_lds2";
    return runtime_compile_request(Variant::parse(variant), 32, 128, arch);
}

}  // namespace

TEST_CASE("hiprtc: a missing libhiprtc is not_found, naming every path tried") {
    HipBackend backend({.runtime = {"/nonexistent/libamdhip64.so"},
                        .hiprtc = {"/nonexistent/a/libhiprtc.so", "/nonexistent/b/libhiprtc.so"},
                        .clang = ClangHipCompiler::default_candidates()});
    try {
        backend.runtime_compiler();
        FAIL("hiprtc was loaded from paths that do not exist");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::not_found);
        CHECK(std::string(e.what()).find("/nonexistent/a/libhiprtc.so") != std::string::npos);
        CHECK(std::string(e.what()).find("/nonexistent/b/libhiprtc.so") != std::string::npos);
        CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
}

TEST_CASE("hiprtc: a version before 6.0 is refused, since it does not know gfx942/gfx950") {
    const FakeRocm rocm;
    rocm.hiprtc(5, 2);
    try {
        HiprtcCompiler compiler(HiprtcApi::load(kFakeHiprtc));
        FAIL("hiprtc 5.2 was accepted");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::unsupported);
        CHECK(std::string(e.what()).find("hiprtc 5.2") != std::string::npos);
        CHECK(std::string(e.what()).find("ROCm 6.0 or newer") != std::string::npos);
    }
    rocm.hiprtc(6, 4);
    CHECK(HiprtcCompiler(HiprtcApi::load(kFakeHiprtc)).version() == "6.4");
}

TEST_CASE("hiprtc: a generated gfx9 kernel compiles for the live target ID, feature flags included") {
    const FakeRocm rocm;
    rocm.hiprtc(6, 2);
    const HiprtcCompiler compiler(HiprtcApi::load(kFakeHiprtc));
    CHECK(compiler.name() == "hiprtc");
    const CompileRequest request = gfx9_request("gfx942:xnack-:sramecc+");
    CHECK(request.arch == "gfx942:sramecc+:xnack-");
    const CompileResult result = compiler.compile(request);
    CHECK(rocm.hiprtc_compiles() == 1);
    CHECK(rocm.hiprtc_options() == "--offload-arch=gfx942:sramecc+:xnack- -O3 -std=c++17 -DNDEBUG");
    const std::optional<Arch> target = amdgpu_code_object_target(result.binary);
    REQUIRE(target.has_value());
    CHECK(target->target_id() == "gfx942:sramecc+:xnack-");
    // The fake checks that every header the source includes was handed over; the template was.
    CHECK(std::string(result.binary.begin(), result.binary.end()).find(request.kernel_name) != std::string::npos);
}

TEST_CASE("hiprtc: a failed compile is compile_failed with hiprtc's log and the options") {
    const FakeRocm rocm;
    rocm.hiprtc(6, 2, /*fail_compiles=*/true);
    const HiprtcCompiler compiler(HiprtcApi::load(kFakeHiprtc));
    try {
        compiler.compile(gfx9_request("gfx950"));
        FAIL("a failing compile returned");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::compile_failed);
        const std::string message = e.what();
        CHECK(message.find("told to fail") != std::string::npos);
        CHECK(message.find("--offload-arch=gfx950") != std::string::npos);
        CHECK(message.find("HIPRTC_ERROR_COMPILATION") != std::string::npos);
    }
    CompileRequest for_nvidia = gfx9_request("gfx950");
    for_nvidia.arch = "sm_90a";
    CHECK(mqajit::testing::error_kind_of([&] { compiler.compile(for_nvidia); }) == ErrorKind::invalid_argument);
}
