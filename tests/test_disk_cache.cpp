// DiskCache: round trip, keys, damaged entries (detected, removed, warned once, rebuilt), the RAII
// temporary entry, concurrent publishes of one key, and an unwritable root.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <spdlog/sinks/ostream_sink.h>

#include "core/log.hpp"
#include "mqajit/error.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/disk_cache_entry.hpp"
#include "tests/runtime_fakes.hpp"
#include "tests/support.hpp"

using namespace mqajit;
using mqajit::testing::FakeCompiler;
using mqajit::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::vector<char> bytes_of(std::string_view text) { return {text.begin(), text.end()}; }

std::string read_text(const fs::path& path) {
    std::ifstream file(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

void write_text(const fs::path& path, std::string_view text) {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << text;
}

std::size_t count_entries(const fs::path& folder) {
    std::error_code ignored;
    if (!fs::exists(folder, ignored)) return 0;
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(folder), fs::directory_iterator()));
}

DiskCacheMeta sample_meta() { return testing::sample_cache_meta(); }

// Captures what the mqajit logger writes while it lives.
class LogCapture {
public:
    LogCapture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_)) { log().sinks().push_back(sink_); }
    ~LogCapture() { std::erase(log().sinks(), sink_); }
    std::size_t count(std::string_view text) const {
        const std::string all = stream_.str();
        std::size_t found = 0;
        for (auto at = all.find(text); at != std::string::npos; at = all.find(text, at + 1)) ++found;
        return found;
    }

private:
    std::ostringstream stream_;
    std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

}  // namespace

TEST_CASE("disk cache: a published entry loads back with its binary and metadata") {
    TempDir dir("disk-cache");
    const DiskCache cache(dir.path() / "kernels");
    const FakeCompiler compiler;
    const std::string key = DiskCache::key_for(compiler, testing::fake_request());
    const auto binary = bytes_of(std::string("\x7f" "ELF binary with \0 zero", 24));

    CHECK_FALSE(cache.load(key).has_value());
    const fs::path entry = cache.publish(key, binary, sample_meta());
    CHECK(entry == dir.path() / "kernels" / key);
    CHECK(fs::is_regular_file(entry / "kernel.bin"));
    CHECK(fs::is_regular_file(entry / "meta.json"));
    CHECK(count_entries(dir.path() / "kernels" / "tmp") == 0);

    const auto hit = cache.load(key);
    REQUIRE(hit.has_value());
    CHECK(hit->binary == binary);
    CHECK(hit->entry == entry);
    CHECK(hit->meta.key == key);
    CHECK(hit->meta.binary_bytes == binary.size());
    CHECK(hit->meta.variant == "wgmma64x128x32_bkv128_r4_w2_lds3_h32_d128");
    CHECK(hit->meta.options == std::vector<std::string>{"--target=sm_90a", "-DX=1"});
    CHECK(hit->meta.usage.registers == 168);
    CHECK(hit->meta.usage.shared_bytes == 32);
    CHECK(hit->meta.log == "ptxas info : Used 168 registers");
    CHECK(hit->meta.created.size() == 20);  // 2025-01-31T12:00:00Z
}

TEST_CASE("disk cache: the key changes with everything that shapes the binary") {
    const FakeCompiler compiler("1.0");
    const CompileRequest base = testing::fake_request();
    const std::string key = DiskCache::key_for(compiler, base);
    CHECK(key.size() == 32);
    CHECK(DiskCache::key_for(compiler, testing::fake_request()) == key);

    CompileRequest changed = base;
    changed.source += " ";
    CHECK(DiskCache::key_for(compiler, changed) != key);
    changed = base;
    changed.arch = "sm_80";
    CHECK(DiskCache::key_for(compiler, changed) != key);
    changed = base;
    changed.kernel_name = "other_kernel";
    CHECK(DiskCache::key_for(compiler, changed) != key);
    changed = base;
    changed.options = {"-DSTAGES=4"};
    CHECK(DiskCache::key_for(compiler, changed) != key);
    CHECK(DiskCache::key_for(FakeCompiler("1.1"), base) != key);

    const EmbeddedFile template_v1[] = {{"family.cuh", "template <int N> struct T {};"}};
    const EmbeddedFile template_v2[] = {{"family.cuh", "template <int N> struct T { int x; };"}};
    CompileRequest with_header = base;
    with_header.headers = template_v1;
    const std::string header_key = DiskCache::key_for(compiler, with_header);
    CHECK(header_key != key);
    with_header.headers = template_v2;
    CHECK(DiskCache::key_for(compiler, with_header) != header_key);
}

TEST_CASE("disk cache: damaged entries are detected, removed with one warning, and can be stored again") {
    TempDir dir("disk-cache-damage");
    const DiskCache cache(dir.path());
    const FakeCompiler compiler;
    const auto binary = bytes_of("0123456789abcdef0123456789abcdef");

    struct Damage {
        const char* name;
        void (*apply)(const fs::path& entry);
    };
    const Damage damages[] = {
        {"truncated kernel.bin", [](const fs::path& e) { fs::resize_file(e / "kernel.bin", 10); }},
        {"flipped byte", [](const fs::path& e) {
             std::string text = read_text(e / "kernel.bin");
             text[5] ^= 0x20;
             write_text(e / "kernel.bin", text);
         }},
        {"garbage meta.json", [](const fs::path& e) { write_text(e / "meta.json", "{not json at all"); }},
        {"meta.json without a field", [](const fs::path& e) { write_text(e / "meta.json", R"({"format": 1})"); }},
        {"missing kernel.bin", [](const fs::path& e) { fs::remove(e / "kernel.bin"); }},
        {"empty meta.json", [](const fs::path& e) { write_text(e / "meta.json", ""); }},
    };
    int index = 0;
    for (const Damage& damage : damages) {
        CAPTURE(damage.name);
        const std::string key = DiskCache::key_for(compiler, testing::fake_request("source " + std::to_string(index++)));
        LogCapture captured;
        const fs::path entry = cache.publish(key, binary, sample_meta());
        damage.apply(entry);

        CHECK_FALSE(cache.load(key).has_value());
        CHECK_FALSE(fs::exists(entry));
        CHECK(captured.count(key) == 1);

        // Damaged a second time in this process: still detected, but not warned about again.
        cache.publish(key, binary, sample_meta());
        damage.apply(entry);
        CHECK_FALSE(cache.load(key).has_value());
        CHECK(captured.count(key) == 1);

        cache.publish(key, binary, sample_meta());
        const auto hit = cache.load(key);
        REQUIRE(hit.has_value());
        CHECK(hit->binary == binary);
    }
    CHECK(count_entries(dir.path() / "tmp") == 0);
}

TEST_CASE("disk cache: an entry that is never published leaves no temporary folder") {
    TempDir dir("disk-cache-temp");
    fs::path temp;
    try {
        DiskCacheEntry entry(dir.path(), std::string(32, 'a'), TrustPolicy::for_process(std::nullopt));
        temp = entry.temp_path();
        entry.write_file("kernel.bin", bytes_of("partial"));
        REQUIRE(fs::exists(temp / "kernel.bin"));
        throw std::runtime_error("compiler crashed half way");
    } catch (const std::runtime_error&) {
    }
    CHECK_FALSE(temp.empty());
    CHECK_FALSE(fs::exists(temp));
    CHECK(count_entries(dir.path() / "tmp") == 0);
    CHECK_FALSE(fs::exists(dir.path() / std::string(32, 'a')));
}

TEST_CASE("disk cache: when two writers publish one key, the first entry stands and the second is dropped") {
    TempDir dir("disk-cache-race");
    const std::string key(32, 'b');
    fs::path published;
    fs::path second_temp;
    {
        const TrustPolicy policy = TrustPolicy::for_process(std::nullopt);
        DiskCacheEntry first(dir.path(), key, policy);
        DiskCacheEntry second(dir.path(), key, policy);
        second_temp = second.temp_path();
        first.write_file("kernel.bin", bytes_of("first"));
        second.write_file("kernel.bin", bytes_of("second"));
        published = first.publish();
        CHECK(second.publish() == published);
    }
    CHECK(read_text(published / "kernel.bin") == "first");
    CHECK_FALSE(fs::exists(second_temp));
    CHECK(count_entries(dir.path() / "tmp") == 0);
}

TEST_CASE("disk cache: an unwritable root is an error for publish and a quiet miss for store") {
    TempDir dir("disk-cache-unwritable");
    const fs::path blocker = dir.path() / "not-a-folder";
    write_text(blocker, "a file where the cache folder should be");
    const DiskCache cache(blocker / "kernels");
    const std::string key(32, 'c');

    CHECK_FALSE(cache.store(key, bytes_of("binary"), sample_meta()).has_value());
    CHECK_FALSE(cache.load(key).has_value());
    try {
        cache.publish(key, bytes_of("binary"), sample_meta());
        FAIL("publish into an unwritable root did not throw");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::io);
        CHECK(std::string(e.what()).find("MQAJIT_CACHE_DIR") != std::string::npos);
    }
}

TEST_CASE("disk cache: keys that are not hashes are never used as paths") {
    TempDir dir("disk-cache-keys");
    const DiskCache cache(dir.path());
    CHECK_FALSE(cache.load("../../etc").has_value());
    CHECK_THROWS_AS(cache.publish("../escape", bytes_of("x"), sample_meta()), Error);
    CHECK(count_entries(dir.path()) == 0);
}
