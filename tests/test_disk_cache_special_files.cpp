// Special files in the kernel cache never hang or exhaust a reader: a FIFO as meta.json or
// kernel.bin, kernel.bin linked to /dev/zero, a FIFO in any entry while AMD looks for aot code
// objects. A plain file where an entry folder belongs is cleaned up, and storing that key works.
// Each reader runs in a child process under `timeout`, so a hang fails the test instead of stalling it.

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "runtime/disk_cache.hpp"
#include "runtime/hip_kernel_source.hpp"
#include "tests/build_flags.hpp"
#include "tests/runtime_fakes.hpp"
#include "tests/support.hpp"

using namespace mqajit;
using mqajit::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::vector<char> bytes_of(std::string_view text) { return {text.begin(), text.end()}; }

DiskCacheMeta small_meta(std::string compiler = "fake") {
    DiskCacheMeta meta = mqajit::testing::sample_cache_meta(std::move(compiler));
    meta.compiler_version = "22.1.8";
    return meta;
}

std::string key_for(std::string_view source) {
    return DiskCache::key_for(mqajit::testing::FakeCompiler(), mqajit::testing::fake_request(std::string(source)));
}

// args: root, key; prints HIT or MISS.
MQAJIT_TEST_CHILD("cache-load", [](const std::vector<std::string>& args) {
    std::printf("%s\n", DiskCache(args.at(0)).load(args.at(1)) ? "HIT" : "MISS");
    return 0;
});

// args: root; prints the clang versions of the aot entries.
MQAJIT_TEST_CHILD("cache-versions", [](const std::vector<std::string>& args) {
    for (const std::string& version : clang_hip_versions_in(args.at(0))) std::printf("VERSION %s\n", version.c_str());
    std::printf("DONE\n");
    return 0;
});

// Runs a child with a 20 s limit and, where ASan does not need the address space, a 4 GiB one, so
// a reader of /dev/zero fails instead of taking the machine's memory.
std::string run_child(const std::string& name, const std::string& args, int* exit_code) {
    const std::string limit = mqajit::testing::kAddressSanitizer ? "" : "ulimit -v 4194304; ";
    const std::string command = limit + "timeout 20 " + fs::read_symlink("/proc/self/exe").string() +
                                " --mqajit-child=" + name + " " + args;
    std::string output;
    *exit_code = mqajit::testing::run_command(command, &output);
    return output;
}

void make_fifo(const fs::path& path) {
    fs::remove(path);
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
}

}  // namespace

TEST_CASE("disk cache special files: a FIFO as meta.json or kernel.bin, or kernel.bin linked to /dev/zero, is a "
          "miss, promptly") {
    struct Case {
        const char* name;
        void (*apply)(const fs::path& entry);
        const char* reason;  // what the warning must say
    };
    const Case cases[] = {
        {"meta.json is a FIFO", [](const fs::path& e) { make_fifo(e / "meta.json"); }, "meta.json is not a regular file"},
        {"kernel.bin is a FIFO", [](const fs::path& e) { make_fifo(e / "kernel.bin"); }, "kernel.bin is not a regular file"},
        {"kernel.bin links to /dev/zero", [](const fs::path& e) {
             fs::remove(e / "kernel.bin");
             fs::create_symlink("/dev/zero", e / "kernel.bin");
         }, "kernel.bin is a symbolic link"},
        {"meta.json links to /dev/zero", [](const fs::path& e) {
             fs::remove(e / "meta.json");
             fs::create_symlink("/dev/zero", e / "meta.json");
         }, "meta.json is a symbolic link"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.name);
        TempDir dir("cache-special");
        const DiskCache cache(dir.path());
        const std::string key = key_for(c.name);
        c.apply(cache.publish(key, bytes_of("BIN[kernel]"), small_meta()));
        int exit_code = 0;
        const std::string output = run_child("cache-load", dir.path().string() + " " + key, &exit_code);
        INFO(output);
        CHECK(exit_code == 0);
        CHECK(output.find("MISS") != std::string::npos);
        CHECK(output.find(c.reason) != std::string::npos);
        // The bad entry is gone, so the kernel can be stored and found again.
        cache.publish(key, bytes_of("BIN[kernel]"), small_meta());
        CHECK(cache.load(key).has_value());
    }
}

TEST_CASE("disk cache special files: a plain file where an entry folder belongs is removed, and the key can be "
          "stored") {
    TempDir dir("cache-squatter");
    const DiskCache cache(dir.path());
    const std::string key = key_for("squatted");
    cache.publish(key_for("other"), bytes_of("BIN[other]"), small_meta());  // the root exists
    std::ofstream(dir.path() / key) << "not a folder";

    CHECK_FALSE(cache.load(key).has_value());
    CHECK_FALSE(fs::exists(dir.path() / key));

    std::ofstream(dir.path() / key) << "not a folder";
    const fs::path entry = cache.publish(key, bytes_of("BIN[kernel]"), small_meta());
    CHECK(fs::is_directory(entry));
    CHECK(cache.load(key).has_value());
}

TEST_CASE("disk cache special files: a FIFO in an entry does not hang the search for aot code objects") {
    TempDir dir("cache-versions-fifo");
    const DiskCache cache(dir.path());
    cache.publish(key_for("aot one"), bytes_of("BIN[a]"), small_meta("clang-hip"));
    const fs::path blocked = cache.publish(key_for("aot two"), bytes_of("BIN[b]"), small_meta("clang-hip"));
    make_fifo(blocked / "meta.json");
    int exit_code = 0;
    const std::string output = run_child("cache-versions", dir.path().string(), &exit_code);
    INFO(output);
    CHECK(exit_code == 0);
    CHECK(output.find("VERSION 22.1.8\nDONE") != std::string::npos);
}
