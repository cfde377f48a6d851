// The HIP backend's device path on the fake libamdhip64 (tests/fake_hip/): device query through
// the properties struct, code object load with its target checked, launch, memory and timing.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "codegen/templates/mqa_logits_params.cuh"
#include "mqajit/error.hpp"
#include "tests/error_kind.hpp"
#include "tests/hip_fakes.hpp"

using namespace mqajit;
using mqajit::testing::error_kind_of;
using mqajit::testing::FakeRocm;
using mqajit::testing::tiny_code_object;

namespace {

constexpr std::uint32_t kGfx942Any = 0x54c;           // gfx942, sramecc any, xnack any
constexpr std::uint32_t kGfx942SrameccOnXnackOff = 0xe4c;
constexpr std::uint32_t kGfx942XnackOn = 0x74c;       // sramecc any, xnack+
constexpr std::uint32_t kGfx950Any = 0x54f;

}  // namespace

TEST_CASE("hip backend (fake runtime): one status line lists every device with its target ID and CU count") {
    const FakeRocm rocm;
    rocm.devices({mqajit::testing::kFakeMi300x, mqajit::testing::kFakeMi355x});
    HipBackend backend = mqajit::testing::fake_hip_backend();
    const DriverStatus status = backend.driver_status();
    CHECK(status.available);
    CHECK(status.message == "HIP runtime 6.2.41133, 2 device(s): AMD Instinct MI300X (gfx942:sramecc+:xnack-, 304 "
                            "CUs), AMD Instinct MI355X (gfx950:sramecc+:xnack-, 256 CUs)");
    CHECK(backend.device_count() == 2);

    const auto device = backend.open_device(1);
    CHECK(device->name() == "AMD Instinct MI355X");
    CHECK(device->arch() == "gfx950:sramecc+:xnack-");
    const Arch arch = Arch::parse(device->arch());
    CHECK(arch.name == "gfx950");  // what tuning lookups use
    CHECK(arch.features == std::vector<std::string>{"sramecc+", "xnack-"});
    CHECK(device->multiprocessor_count() == 256);
    CHECK(device->max_shared_bytes_per_block() == 163840);
    CHECK(device->driver_version() == "6.2.41133");
    CHECK(device->ordinal() == 1);
    CHECK(backend.open_device(1) == device);
    CHECK(error_kind_of([&] { backend.open_device(2); }) == ErrorKind::invalid_argument);

    CHECK(backend.current_device()->ordinal() == 0);
    device->make_current();
    CHECK(backend.current_device() == device);
}

TEST_CASE("hip backend (fake runtime): properties in a layout this build does not read are refused, not misread") {
    const FakeRocm rocm;
    FakeHipDevice shifted = mqajit::testing::kFakeMi300x;
    shifted.properties_compute_units = 0;  // as if multiProcessorCount had moved
    rocm.devices({shifted});
    HipBackend backend = mqajit::testing::fake_hip_backend();
    const DriverStatus status = backend.driver_status();
    CHECK_FALSE(status.available);
    CHECK(status.message.starts_with("HIP runtime found but unusable: "));
    CHECK(status.message.find("layout this build does not read") != std::string::npos);
    CHECK(status.message.find('\n') == std::string::npos);
    CHECK(backend.device_count() == 0);
    CHECK(error_kind_of([&] { backend.open_device(0); }) == ErrorKind::not_found);
}

TEST_CASE("hip device (fake runtime): code objects load only for a target the device runs") {
    const FakeRocm rocm;
    rocm.devices({mqajit::testing::kFakeMi300x, mqajit::testing::kFakeMi355x});
    HipBackend backend = mqajit::testing::fake_hip_backend();
    const auto mi300 = backend.open_device(0);
    const auto mi355 = backend.open_device(1);
    const std::string payload = "extern \"C\" void mqa_logits_baseline_h32_d128(MqaLogitsParams p);";

    for (std::uint32_t flags : {kGfx942Any, kGfx942SrameccOnXnackOff}) {
        CAPTURE(flags);
        auto kernel = mi300->load(tiny_code_object(flags, payload), "mqa_logits_baseline_h32_d128");
        CHECK(kernel->name() == "mqa_logits_baseline_h32_d128");
        CHECK(rocm.live_modules() == 1);
        kernel.reset();
        CHECK(rocm.live_modules() == 0);  // the module is unloaded with the kernel
    }
    // Another processor, or a feature flag set the other way: refused before hipModuleLoadData.
    try {
        mi355->load(tiny_code_object(kGfx942Any, payload), "mqa_logits_baseline_h32_d128");
        FAIL("a gfx942 code object was loaded on a gfx950 device");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::unsupported);
        CHECK(std::string(e.what()).find("built for gfx942, which this gfx950:sramecc+:xnack- device cannot run") !=
              std::string::npos);
    }
    CHECK(error_kind_of([&] { mi300->load(tiny_code_object(kGfx942XnackOn, payload), "mqa_logits_baseline_h32_d128"); }) ==
          ErrorKind::unsupported);
    CHECK(error_kind_of([&] { mi300->load(tiny_code_object(kGfx950Any, payload), "mqa_logits_baseline_h32_d128"); }) ==
          ErrorKind::unsupported);
    CHECK(rocm.live_modules() == 0);
    // A kernel the code object lacks: not_found, and the module is not leaked.
    CHECK(error_kind_of([&] { mi300->load(tiny_code_object(kGfx942Any, payload), "other_kernel"); }) ==
          ErrorKind::not_found);
    CHECK(rocm.live_modules() == 0);
    // Not a code object at all: the runtime's own error.
    const std::string junk = "not an ELF file at all, but long enough to have a header's worth of bytes in it....";
    CHECK(error_kind_of([&] { mi300->load(std::span<const char>(junk.data(), junk.size()), "k"); }) == ErrorKind::driver);
}

TEST_CASE("hip device (fake runtime): a launch hands grid, block, LDS, stream and the argument to its own device") {
    const FakeRocm rocm;
    rocm.devices({mqajit::testing::kFakeMi300x, mqajit::testing::kFakeMi355x});
    HipBackend backend = mqajit::testing::fake_hip_backend();
    const auto mi300 = backend.open_device(0);
    const auto mi355 = backend.open_device(1);
    const auto kernel = mi355->load(tiny_code_object(kGfx950Any, "k_gfx950"), "k_gfx950");
    const auto stream = mi355->create_stream();
    REQUIRE(stream != nullptr);

    MqaLogitsParams params{};
    const LaunchConfig config{.grid_x = 7, .grid_y = 3, .grid_z = 1, .block_x = 256, .block_y = 1, .block_z = 1,
                              .dynamic_shared_bytes = 98304};
    mi355->launch(*kernel, config, stream->handle(), &params, sizeof(params));
    const FakeHipLaunch& launch = rocm.last_launch();
    CHECK(launch.count == 1);
    CHECK(std::string(launch.kernel) == "k_gfx950");
    CHECK(launch.grid[0] == 7);
    CHECK(launch.grid[1] == 3);
    CHECK(launch.block[0] == 256);
    CHECK(launch.shared_bytes == 98304);
    CHECK(launch.stream == stream->handle());
    CHECK(launch.first_argument == &params);
    CHECK(launch.current_device == 1);               // launched with its device current ...
    CHECK(backend.current_device()->ordinal() == 0);  // ... and the caller's current device put back

    LaunchConfig too_much_lds = config;
    too_much_lds.dynamic_shared_bytes = 163841;
    CHECK(error_kind_of([&] { mi355->launch(*kernel, too_much_lds, nullptr, &params, sizeof(params)); }) ==
          ErrorKind::invalid_argument);
    CHECK(error_kind_of([&] { mi300->launch(*kernel, config, nullptr, &params, sizeof(params)); }) ==
          ErrorKind::invalid_argument);
    MqaTensorMap map{};
    CHECK(error_kind_of([&] { mi355->encode_tensor_map(TensorMapRequest{}, map); }) == ErrorKind::unsupported);
    CHECK(rocm.last_launch().count == 1);
}

TEST_CASE("hip device (fake runtime): memory copies and fills, and the event timer") {
    const FakeRocm rocm;
    rocm.devices({mqajit::testing::kFakeMi300x});
    HipBackend backend = mqajit::testing::fake_hip_backend();
    const auto device = backend.open_device(0);
    const auto buffer = device->allocate(64);
    REQUIRE(buffer->size() == 64);
    const std::vector<std::uint32_t> words = {1, 2, 3, 4, 5, 6, 7, 8};
    device->copy_to_device(buffer->data(), words.data(), 32, nullptr);
    device->fill_u32(static_cast<char*>(buffer->data()) + 32, 0xff800000u, 8, nullptr);
    std::vector<std::uint32_t> back(16, 0);
    device->copy_to_host(back.data(), buffer->data(), 64);
    CHECK(back[3] == 4);
    CHECK(back[8] == 0xff800000u);
    CHECK(back[15] == 0xff800000u);
    CHECK(error_kind_of([&] { device->fill_u32(static_cast<char*>(buffer->data()) + 1, 0, 1, nullptr); }) ==
          ErrorKind::invalid_argument);

    // The fake's clock advances by a fixed cost per launch of a kernel: two launches take twice one.
    const auto kernel = device->load(tiny_code_object(kGfx942Any, "k_timed"), "k_timed");
    const LaunchConfig config{};
    MqaLogitsParams params{};
    const auto timer = device->create_timer();
    CHECK(error_kind_of([&] { timer->elapsed_ms(); }) == ErrorKind::invalid_argument);
    timer->record_start(nullptr);
    device->launch(*kernel, config, nullptr, &params, sizeof(params));
    timer->record_stop(nullptr);
    const double one = timer->elapsed_ms();
    CHECK(one > 0.0);
    timer->record_start(nullptr);
    device->launch(*kernel, config, nullptr, &params, sizeof(params));
    device->launch(*kernel, config, nullptr, &params, sizeof(params));
    timer->record_stop(nullptr);
    CHECK(timer->elapsed_ms() == doctest::Approx(2 * one));
}
