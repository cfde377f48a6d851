// Where an AMD device's generated kernels come from at run time: `mqajit aot` code objects found
// under aot's own key (no compile), else the run-time compiler for the full target ID, whose
// feature flags are in the cache keys. Fake compilers and devices, no GPU.

#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "mqajit/error.hpp"
#include "runtime/compiler_clang_hip.hpp"
#include "runtime/kernel_request.hpp"
#include "runtime/hip_kernel_source.hpp"
#include "runtime/hiprtc_api.hpp"
#include "tests/error_kind.hpp"
#include "tests/runtime_fakes.hpp"
#include "tests/support.hpp"

using namespace mqajit;
using mqajit::testing::FakeCompiler;
using mqajit::testing::FakeDevice;
using mqajit::testing::FakeKernel;

namespace {

// What `mqajit aot` would have used: clang-hip's name, version and options, with a fake output.
class FakeClangHip final : public Compiler {
public:
    explicit FakeClangHip(std::string version) : version_(std::move(version)) {}
    std::string name() const override { return "clang-hip"; }
    std::string version() const override { return version_; }
    std::vector<std::string> base_options(const std::string& arch) const override {
        return ClangHipCompiler::options_for(arch);
    }
    CompileResult compile(const CompileRequest& request) const override {
        CompileResult result;
        const std::string text = "BIN[" + request.arch + "] aot " + request.kernel_name;
        result.binary.assign(text.begin(), text.end());
        return result;
    }

private:
    std::string version_;
};

const Variant kVariant = Variant::parse("mfma32x32x16_bkv64_r1_w4_lds2");
constexpr const char* kLiveTarget = "gfx942:sramecc+:xnack-";

// Runs `mqajit aot` for kVariant at H = 32, D = 128 through the same calls the CLI makes.
void publish_aot_entry(const std::filesystem::path& root, const Compiler& clang) {
    KernelCache aot(DiskCache(root), 1);
    const Arch arch = Arch::parse("gfx942");
    aot.compile_ahead_of_time(clang, kernel_key_for(kVariant, 32, 128, arch, clang),
                              [&] { return compile_request_for(kVariant, 32, 128, arch); });
}

std::string binary_of(const LoadedKernel& kernel) {
    const auto& fake = dynamic_cast<const FakeKernel&>(kernel);
    return std::string(fake.binary.begin(), fake.binary.end());
}

}  // namespace

TEST_CASE("hip kernel source: the live target ID's feature flags are in the run-time cache keys, not in aot's") {
    const FakeCompiler runtime_compiler("6.2");
    const Arch xnack_off = Arch::parse("gfx942:sramecc+:xnack-");
    const Arch xnack_on = Arch::parse("gfx942:sramecc+:xnack+");
    const KernelKey key_off = runtime_kernel_key(kVariant, 32, 128, xnack_off, runtime_compiler);
    const KernelKey key_on = runtime_kernel_key(kVariant, 32, 128, xnack_on, runtime_compiler);
    CHECK(key_off.arch == "gfx942:sramecc+:xnack-");
    CHECK_FALSE(key_off == key_on);
    const CompileRequest request_off = runtime_compile_request(kVariant, 32, 128, xnack_off);
    const CompileRequest request_on = runtime_compile_request(kVariant, 32, 128, xnack_on);
    CHECK(request_off.source == request_on.source);  // the same kernel ...
    CHECK(DiskCache::key_for(runtime_compiler, request_off) != DiskCache::key_for(runtime_compiler, request_on));
    // ... while aot builds for the bare processor, which runs with either setting.
    const FakeClangHip clang("22.1.8");
    const Arch bare = Arch::parse("gfx942");
    CHECK(kernel_key_for(kVariant, 32, 128, bare, clang).arch == "gfx942");
    CHECK(compile_request_for(kVariant, 32, 128, bare).arch == "gfx942");
}

TEST_CASE("hip kernel source: an aot code object in the disk cache is loaded without compiling") {
    const mqajit::testing::TempDir cache_dir("hip-aot");
    const FakeClangHip clang("22.1.8");
    publish_aot_entry(cache_dir.path(), clang);

    const FakeCompiler runtime_compiler("6.2");
    HipKernelSource source([&]() -> const Compiler& { return runtime_compiler; });
    KernelCache cache(DiskCache(cache_dir.path()), 8);
    FakeDevice device(0, kLiveTarget);
    const auto kernel = source.get(cache, device, kVariant, 32, 128);
    REQUIRE(kernel != nullptr);
    CHECK(runtime_compiler.compiles == 0);
    CHECK(device.loads == 1);
    CHECK(binary_of(*kernel) == "BIN[gfx942] aot " + kernel->name());
    // A second call is a memory-cache hit.
    CHECK(source.get(cache, device, kVariant, 32, 128) == kernel);
    CHECK(device.loads == 1);
}

TEST_CASE("hip kernel source: without an aot code object the run-time compiler builds for the full target ID") {
    const mqajit::testing::TempDir cache_dir("hip-runtime");
    // An aot entry of another variant and an NVRTC entry do not serve this one.
    publish_aot_entry(cache_dir.path(), FakeClangHip("21.1.0"));
    const FakeCompiler runtime_compiler("6.2");
    HipKernelSource source([&]() -> const Compiler& { return runtime_compiler; });
    KernelCache cache(DiskCache(cache_dir.path()), 8);
    FakeDevice device(0, kLiveTarget);
    const Variant other = Variant::parse("mfma16x16x32_bkv64_r1_w4_lds2");
    const auto kernel = source.get(cache, device, other, 32, 128);
    CHECK(runtime_compiler.compiles == 1);
    CHECK(binary_of(*kernel).starts_with("BIN[gfx942:sramecc+:xnack-]"));

    // Without a disk cache (MQAJIT_DISABLE_DISK_CACHE) the run-time compiler serves too.
    KernelCache memory_only(std::nullopt, 8);
    source.get(memory_only, device, kVariant, 32, 128);
    CHECK(runtime_compiler.compiles == 2);
}

TEST_CASE("hip kernel source: a missing hiprtc reaches the caller as not_found, naming the library") {
    const mqajit::testing::TempDir cache_dir("hip-no-hiprtc");
    const std::string missing[] = {"/nonexistent/libhiprtc.so"};
    HipKernelSource source([&]() -> const Compiler& {
        HiprtcApi::load(missing);
        throw std::logic_error("unreachable: the load above throws");
    });
    KernelCache cache(DiskCache(cache_dir.path()), 8);
    FakeDevice device(0, kLiveTarget);
    try {
        source.get(cache, device, kVariant, 32, 128);
        FAIL("a kernel came from nowhere");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::not_found);
        CHECK(std::string(e.what()).find("/nonexistent/libhiprtc.so") != std::string::npos);
    }
    CHECK(device.loads == 0);
}

TEST_CASE("hip kernel source: the clang versions of aot code objects are read from meta.json, newest first") {
    const mqajit::testing::TempDir cache_dir("hip-versions");
    CHECK(clang_hip_versions_in(cache_dir.path() / "absent").empty());
    publish_aot_entry(cache_dir.path(), FakeClangHip("21.1.0"));
    publish_aot_entry(cache_dir.path(), FakeClangHip("22.1.8"));
    KernelCache nvrtc(DiskCache(cache_dir.path()), 1);
    const FakeCompiler fake_nvrtc;
    nvrtc.compile_ahead_of_time(fake_nvrtc, KernelKey{"f", "v", "sm_90a", "fake-1.0"},
                                [] { return mqajit::testing::fake_request(); });
    std::filesystem::create_directory(cache_dir.path() / "0123456789abcdef0123456789abcdef");
    std::ofstream(cache_dir.path() / "0123456789abcdef0123456789abcdef" / "meta.json") << "{ not json";
    CHECK(clang_hip_versions_in(cache_dir.path()) == std::vector<std::string>{"22.1.8", "21.1.0"});
}
