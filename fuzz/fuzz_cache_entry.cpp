// The disk-cache entry reader: whatever meta.json, meta.hmac and kernel.bin hold, load() neither
// crashes nor hangs nor reads past what meta.json records; an entry it returns matches its seal
// and its recorded size and hash. The input is "meta.json\0meta.hmac\0kernel.bin"; when the seal
// part is "SEAL" the fuzzer seals meta.json with the cache's real key, so the parser behind the
// seal is reached too (a planter cannot do that; the check must hold either way).

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "core/files.hpp"
#include "core/sha256.hpp"
#include "fuzz/fuzz_support.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/disk_cache_seal.hpp"

using namespace mqajit;
namespace fs = std::filesystem;

namespace {

constexpr const char* kKey = "0123456789abcdef0123456789abcdef";

struct Cache {
    fs::path root = fuzz::scratch() / "kernels";
    DiskCache cache{root, TrustPolicy::for_process(std::nullopt)};
    CacheSeal seal;

    Cache() : seal(open_seal()) {}
    CacheSeal open_seal() {
        DiskCacheMeta meta;
        cache.publish("ffffffffffffffffffffffffffffffff", std::vector<char>{'x'}, meta);  // makes the root and key
        UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        return CacheSeal::open(root_fd.get(), root, TrustPolicy::for_process(std::nullopt), false);
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static Cache fixture;
    const auto [meta, seal, binary] = fuzz::split<3>(fuzz::as_text(data, size), std::string_view("\0", 1));
    const fs::path entry = fixture.root / kKey;
    std::error_code ignored;
    fs::remove_all(entry, ignored);
    fs::create_directory(entry);
    fuzz::write_file(entry / "meta.json", meta);
    fuzz::write_file(entry / "meta.hmac", seal == "SEAL" ? fixture.seal.seal(kKey, meta) : std::string(seal));
    fuzz::write_file(entry / "kernel.bin", binary);

    const auto hit = fixture.cache.load(kKey);
    if (hit) {
        MQAJIT_FUZZ_EXPECT(seal == "SEAL");
        MQAJIT_FUZZ_EXPECT(hit->meta.key == kKey);
        MQAJIT_FUZZ_EXPECT(hit->binary.size() == hit->meta.binary_bytes);
        MQAJIT_FUZZ_EXPECT(std::string_view(hit->binary.data(), hit->binary.size()) == binary);
        MQAJIT_FUZZ_EXPECT(to_hex(sha256(binary)) == hit->meta.binary_sha256);
    } else {
        // A refused entry is removed, so the key can be stored again.
        MQAJIT_FUZZ_EXPECT(!fs::exists(fs::symlink_status(entry)));
    }
    (void)fixture.cache.entries();
    return 0;
}
