// Eight processes compile the same kernel into one shared cache folder at the same moment: all
// succeed, exactly one entry is published, and no temporary folder is left behind.

#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "runtime/backend.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/kernel_cache.hpp"
#include "tests/gpu_support.hpp"
#include "tests/support.hpp"

using namespace mqajit;
namespace fs = std::filesystem;

namespace {

constexpr const char* kSource = R"(
extern "C" __global__ void shared_entry(float* data, int count) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) data[i] = data[i] * 2.0f + 1.0f;
}
)";

CompileRequest shared_request() {
    CompileRequest request;
    request.source = kSource;
    request.source_name = "shared_entry.cu";
    request.kernel_name = "shared_entry";
    request.arch = "sm_90a";
    return request;
}

bool wait_for_file(const fs::path& path, std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!fs::exists(path)) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

// args: cache folder, barrier file, child index.
int compile_into_shared_cache(const std::vector<std::string>& args) {
    if (args.size() != 3) return 2;
    const Compiler& compiler = backend_for(Vendor::nvidia).compiler();  // loaded before the start signal
    if (!wait_for_file(args[1], std::chrono::seconds(60))) return 5;
    KernelCache cache(DiskCache(args[0]), 1);
    const KernelKey key{.family = "test", .variant = "shared_entry", .arch = "sm_90a",
                        .options_fingerprint = compiler.name() + "-" + compiler.version()};
    const auto result = cache.compile_ahead_of_time(compiler, key, shared_request);
    if (!fs::is_regular_file(result.entry / "kernel.bin")) return 6;
    std::printf("child %s: %s\n", args[2].c_str(), result.from_cache ? "found it cached" : "compiled it");
    return 0;
}

}  // namespace

MQAJIT_TEST_CHILD("concurrent-aot-compile", compile_into_shared_cache);

TEST_CASE("concurrent compile: 8 processes building one kernel publish exactly one cache entry") {
    MQAJIT_REQUIRE_BACKEND(Vendor::nvidia);  // the children compile with NVRTC
    testing::TempDir dir("concurrent-compile");
    const fs::path cache_root = dir.path() / "kernels";
    const fs::path barrier = dir.path() / "go";
    constexpr int kChildren = 8;

    auto children = std::async(std::launch::async, [&] {
        return testing::run_children("concurrent-aot-compile", {cache_root.string(), barrier.string()}, kChildren);
    });
    // NOTES: the barrier appears only once every child has had time to start and load NVRTC, so
    // their compiles and publishes overlap.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    std::ofstream(barrier) << "go\n";
    const std::vector<int> codes = children.get();

    REQUIRE(codes.size() == kChildren);
    for (int code : codes) CHECK(code == 0);

    std::vector<fs::path> entries;
    for (const auto& item : fs::directory_iterator(cache_root)) {
        // NOTES: seal.key is made by whichever child is first; all must have sealed with that one key.
        if (item.path().filename() != "tmp" && item.path().filename() != "seal.key") entries.push_back(item.path());
    }
    REQUIRE(entries.size() == 1);
    const DiskCache cache(cache_root);
    const auto hit = cache.load(entries[0].filename().string());
    REQUIRE(hit.has_value());
    CHECK(hit->meta.kernel_name == "shared_entry");
    CHECK(hit->binary.size() > 4);

    const fs::path temp = cache_root / "tmp";
    const bool no_leftovers = !fs::exists(temp) || fs::is_empty(temp);
    CHECK(no_leftovers);
}
