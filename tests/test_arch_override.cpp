// MQAJIT_ARCH at run time: the live arch wins, code built for another arch is recognised (from an
// AMDGPU code object's own header too), and a differing MQAJIT_ARCH is one warning, not an error.
// Dispatch's side of it, on a fake AMD device, is in test_hip_dispatch_fake.cpp.

#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "mqajit/error.hpp"
#include "runtime/arch_override.hpp"
#include "runtime/hip_code_object.hpp"
#include "tests/error_kind.hpp"
#include "tests/hip_fakes.hpp"
#include "tests/test_tuning_db_support.hpp"

using namespace mqajit;

namespace {

bool runs(const char* built_for, const char* live) { return code_runs_on(Arch::parse(built_for), Arch::parse(live)); }

}  // namespace

TEST_CASE("arch override: code runs only on its own processor, with fixed feature flags matching the device") {
    CHECK(runs("gfx942", "gfx942:sramecc+:xnack-"));      // built for "any"
    CHECK(runs("gfx942:sramecc+:xnack-", "gfx942:xnack-:sramecc+"));
    CHECK(runs("gfx942:xnack-", "gfx942:sramecc+:xnack-"));
    CHECK_FALSE(runs("gfx942:xnack+", "gfx942:sramecc+:xnack-"));
    CHECK_FALSE(runs("gfx942:sramecc-", "gfx942:sramecc+:xnack-"));
    CHECK(runs("gfx942:xnack+", "gfx942"));               // a device that does not report xnack
    CHECK_FALSE(runs("gfx942", "gfx950:sramecc+:xnack-"));
    CHECK_FALSE(runs("gfx950", "gfx942"));
    CHECK_FALSE(runs("gfx90a", "gfx942"));
    CHECK(runs("sm_90a", "sm_90a"));
    CHECK_FALSE(runs("sm_90a", "sm_90"));
    CHECK_FALSE(runs("sm_80", "sm_90a"));
    CHECK_FALSE(runs("sm_90a", "gfx942"));

    try {
        check_code_runs_on(Arch::parse("gfx942:xnack+"), Arch::parse("gfx942:sramecc+:xnack-"), "kernel k");
        FAIL("xnack+ code was accepted for an xnack- device");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::unsupported);
        CHECK(std::string(e.what()).starts_with("kernel k was built for gfx942:xnack+, which this "
                                                "gfx942:sramecc+:xnack- device cannot run"));
    }
}

TEST_CASE("arch override: an AMDGPU code object's header names its target") {
    using mqajit::testing::tiny_code_object;
    CHECK(amdgpu_code_object_target(tiny_code_object(0x54c, ""))->target_id() == "gfx942");
    CHECK(amdgpu_code_object_target(tiny_code_object(0xe4c, ""))->target_id() == "gfx942:sramecc+:xnack-");
    CHECK(amdgpu_code_object_target(tiny_code_object(0x74f, ""))->target_id() == "gfx950:xnack+");
    CHECK(amdgpu_code_object_target(tiny_code_object(0x83f, ""))->target_id() == "gfx90a:sramecc-");
    CHECK(amdgpu_code_object_abi_version(tiny_code_object(0x54c, "")) == 3);
    // Not an AMDGPU code object: nothing to say (the runtime judges it).
    const std::string cubin_like = "\x7f" "ELF" + std::string(60, '\0');
    CHECK_FALSE(amdgpu_code_object_target(std::span<const char>(cubin_like.data(), cubin_like.size())));
    CHECK_FALSE(amdgpu_code_object_target(std::span<const char>("\x7f" "ELF", 4)));
    CHECK(amdgpu_code_object_abi_version(std::span<const char>("BIN[", 4)) == -1);
    // A processor this build does not know is named, not guessed.
    CHECK(mqajit::testing::error_kind_of([] { amdgpu_code_object_target(tiny_code_object(0x7e, "")); }) ==
          ErrorKind::unsupported);
}

TEST_CASE("arch override: MQAJIT_ARCH naming another arch is one warning per pair, a matching one is silent") {
    const mqajit::testing::LogCapture capture;
    const Arch live = Arch::parse("gfx950:sramecc+:xnack-");
    CHECK_FALSE(warn_if_arch_override_differs(std::nullopt, live));
    CHECK_FALSE(warn_if_arch_override_differs(std::string("gfx950"), live));
    CHECK_FALSE(warn_if_arch_override_differs(std::string("gfx950:xnack-"), live));
    CHECK(capture.warnings() == 0);

    CHECK(warn_if_arch_override_differs(std::string("gfx942"), live));
    CHECK_FALSE(warn_if_arch_override_differs(std::string("gfx942"), live));
    CHECK(capture.warnings() == 1);
    CHECK(capture.count("MQAJIT_ARCH=gfx942 names gfx942, but the device is gfx950:sramecc+:xnack-") == 1);
    CHECK(capture.count("tuned rows are looked up and kernels are built for the device's arch") == 1);

    CHECK(warn_if_arch_override_differs(std::string("gfx9x9"), live));  // malformed: warned, never thrown
    CHECK(capture.count("MQAJIT_ARCH=gfx9x9 is not an arch") == 1);
    CHECK(warn_if_arch_override_differs(std::string("gfx942"), Arch::parse("sm_90a")));
    CHECK(capture.warnings() == 3);
}
