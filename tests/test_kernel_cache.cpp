// KernelCache with a fake compiler and device: memory hits skip source generation, disk hits skip
// compiling, ahead-of-time builds land in the disk cache, and a cached binary the device refuses is
// rebuilt.

#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "mqajit/error.hpp"
#include "runtime/kernel_cache.hpp"
#include "tests/runtime_fakes.hpp"
#include "tests/support.hpp"

using namespace mqajit;
using mqajit::testing::FakeCompiler;
using mqajit::testing::FakeDevice;
using mqajit::testing::FakeKernel;
using mqajit::testing::TempDir;
namespace fs = std::filesystem;

namespace {

const KernelKey kKey{.family = "fake_family", .variant = "v1_h32_d128", .arch = "sm_90a", .options_fingerprint = "fake-1.0"};

}  // namespace

TEST_CASE("kernel cache: KernelKey hashes and compares by every field") {
    const std::hash<KernelKey> hash;
    KernelKey other = kKey;
    CHECK(other == kKey);
    CHECK(hash(other) == hash(kKey));
    other.options_fingerprint = "fake-1.1";
    CHECK_FALSE(other == kKey);
    CHECK(hash(other) != hash(kKey));
}

TEST_CASE("kernel cache: a memory hit neither generates source nor compiles, per device") {
    KernelCache cache(std::nullopt, 16);
    FakeCompiler compiler;
    FakeDevice device0(0), device1(1);
    std::atomic<int> generated{0};
    auto make_request = [&] {
        ++generated;
        return testing::fake_request();
    };

    auto first = cache.get(device0, compiler, kKey, make_request);
    auto second = cache.get(device0, compiler, kKey, make_request);
    CHECK(first.get() == second.get());
    CHECK(generated == 1);
    CHECK(compiler.compiles == 1);
    CHECK(device0.loads == 1);

    auto on_other_device = cache.get(device1, compiler, kKey, make_request);
    CHECK(on_other_device.get() != first.get());
    CHECK(device1.loads == 1);
    CHECK(cache.loaded_count() == 2);
}

TEST_CASE("kernel cache: concurrent misses of one key generate and compile once") {
    KernelCache cache(std::nullopt, 16);
    FakeCompiler compiler;
    FakeDevice device;
    std::atomic<int> generated{0};
    std::vector<std::thread> threads;
    std::vector<std::shared_ptr<LoadedKernel>> kernels(8);
    for (int i = 0; i < 8; ++i) {
        threads.emplace_back([&, i] {
            kernels[i] = cache.get(device, compiler, kKey, [&] {
                ++generated;
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                return testing::fake_request();
            });
        });
    }
    for (auto& thread : threads) thread.join();
    CHECK(generated == 1);
    CHECK(compiler.compiles == 1);
    for (const auto& kernel : kernels) CHECK(kernel.get() == kernels[0].get());
}

TEST_CASE("kernel cache: a second process-like cache finds the binary on disk") {
    TempDir dir("kernel-cache-disk");
    FakeCompiler compiler;
    FakeDevice device;
    {
        KernelCache cache(DiskCache(dir.path()), 4);
        cache.get(device, compiler, kKey, [] { return testing::fake_request(); });
    }
    CHECK(compiler.compiles == 1);
    KernelCache fresh(DiskCache(dir.path()), 4);
    auto kernel = fresh.get(device, compiler, kKey, [] { return testing::fake_request(); });
    CHECK(compiler.compiles == 1);
    CHECK(device.loads == 2);
    const auto& fake = dynamic_cast<const FakeKernel&>(*kernel);
    CHECK(std::string(fake.binary.begin(), fake.binary.end()) == "BIN[sm_90a]kernel body");
}

TEST_CASE("kernel cache: compile_ahead_of_time stores the kernel and reports its usage from cache too") {
    TempDir dir("kernel-cache-aot");
    FakeCompiler compiler;
    KernelCache cache(DiskCache(dir.path()), 1);
    const auto built = cache.compile_ahead_of_time(compiler, kKey, [] { return testing::fake_request(); });
    CHECK_FALSE(built.from_cache);
    CHECK(built.compile_ms >= 0.0);
    CHECK(built.usage.registers == 42);
    CHECK(built.usage.spills());
    CHECK(fs::is_regular_file(built.entry / "kernel.bin"));
    CHECK(built.entry.parent_path() == dir.path());

    const auto again = cache.compile_ahead_of_time(compiler, kKey, [] { return testing::fake_request(); });
    CHECK(again.from_cache);
    CHECK(again.entry == built.entry);
    CHECK(again.usage.registers == 42);
    CHECK(again.usage.stack_bytes == 8);
    CHECK(again.log == built.log);
    CHECK(compiler.compiles == 1);

    const auto hit = DiskCache(dir.path()).load(built.entry.filename().string());
    REQUIRE(hit.has_value());
    CHECK(hit->meta.family == "fake_family");
    CHECK(hit->meta.variant == "v1_h32_d128");
    CHECK(hit->meta.compiler == "fake");
    CHECK(hit->meta.options == std::vector<std::string>{"--target=sm_90a"});
}

TEST_CASE("kernel cache: ahead-of-time compiling needs the disk cache") {
    FakeCompiler compiler;
    KernelCache cache(std::nullopt, 1);
    try {
        cache.compile_ahead_of_time(compiler, kKey, [] { return testing::fake_request(); });
        FAIL("compile_ahead_of_time without a disk cache did not throw");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::unsupported);
        CHECK(std::string(e.what()).find("MQAJIT_DISABLE_DISK_CACHE") != std::string::npos);
    }
}

TEST_CASE("kernel cache: a compile failure reaches the caller and is not cached") {
    KernelCache cache(std::nullopt, 4);
    FakeCompiler compiler;
    FakeDevice device;
    CHECK_THROWS_AS(cache.get(device, compiler, kKey, [] { return testing::fake_request("syntax error"); }), Error);
    CHECK(cache.loaded_count() == 0);
    auto kernel = cache.get(device, compiler, kKey, [] { return testing::fake_request(); });
    CHECK(kernel != nullptr);
    CHECK(compiler.compiles == 2);
}

TEST_CASE("kernel cache: a cached binary the device refuses is dropped and rebuilt") {
    TempDir dir("kernel-cache-refused");
    FakeCompiler compiler;
    const CompileRequest request = testing::fake_request();
    const std::string key = DiskCache::key_for(compiler, request);
    // An intact entry (size and hash agree) whose content the device cannot load.
    DiskCacheMeta meta;
    meta.compiler = "fake";
    DiskCache(dir.path()).publish(key, std::vector<char>{'J', 'U', 'N', 'K'}, meta);

    KernelCache cache(DiskCache(dir.path()), 4);
    FakeDevice device;
    auto kernel = cache.get(device, compiler, kKey, [&] { return request; });
    REQUIRE(kernel != nullptr);
    CHECK(compiler.compiles == 1);
    const auto hit = DiskCache(dir.path()).load(key);
    REQUIRE(hit.has_value());
    CHECK(std::string(hit->binary.begin(), hit->binary.end()) == "BIN[sm_90a]kernel body");
}
