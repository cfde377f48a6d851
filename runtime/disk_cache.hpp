#pragma once
// Compiled kernels on disk, shared by every process of this user (or, on purpose, of one group)
// that uses the same folder:
//   <root>/<key>/kernel.bin   the binary
//   <root>/<key>/meta.json    what built it, and its size and SHA-256
//   <root>/<key>/meta.hmac    the seal over the key and meta.json (runtime/disk_cache_seal.hpp)
//   <root>/seal.key           the cache's secret, readable by this user (or the group) only
//   <root>/tmp/               entries being written (see DiskCacheEntry)
// An entry is loaded only when it can be trusted: the root and every folder above it can be changed
// by no one but this user, root or the cache group (core/trusted_path.hpp); the entry and its files
// are theirs, opened without following links, regular files read up to their recorded size; and
// its seal is right. A damaged or foreign entry is removed with one warning and reads as a miss;
// nothing here throws on a bad entry, and an unusable folder only means kernels are not kept.

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/trusted_path.hpp"
#include "runtime/compiler.hpp"
#include "runtime/disk_cache_meta.hpp"

namespace mqajit {

struct DiskCacheHit {
    std::filesystem::path entry;
    std::vector<char> binary;
    DiskCacheMeta meta;
};

class DiskCache {
public:
    // The largest meta.json and kernel.bin read back; real ones are far smaller.
    static constexpr std::size_t kMaxMetaBytes = std::size_t{16} << 20;
    static constexpr std::size_t kMaxBinaryBytes = std::size_t{1} << 30;

    // settings().cache_dir / "kernels" is the usual root. Nothing is created until something is
    // stored. The first form trusts this user and the group of MQAJIT_CACHE_GROUP, if set.
    explicit DiskCache(std::filesystem::path root);
    DiskCache(std::filesystem::path root, TrustPolicy policy);

    const std::filesystem::path& root() const { return root_; }

    // The entry key (32 hex digits) of what `compiler` would build from `request`: it hashes the
    // compiler's name, version and effective options, the arch, the kernel name, the source and the
    // text of every header the source may include.
    static std::string key_for(const Compiler& compiler, const CompileRequest& request);
    // A hash of the source and its headers, recorded in meta.json.
    static std::string source_hash(const CompileRequest& request);

    // The entry, checked as the header says; nullopt when absent, untrusted or damaged (then removed).
    std::optional<DiskCacheHit> load(const std::string& key) const;
    // The checked metadata of every entry, without reading binaries (to find `mqajit aot` entries).
    std::vector<DiskCacheMeta> entries() const;
    // Writes and publishes an entry (filling meta's key, size, hash and date); returns its folder.
    // Throws Error(io) when the folder cannot be written or is not safe to use.
    std::filesystem::path publish(const std::string& key, std::span<const char> binary, DiskCacheMeta meta) const;
    // Like publish(), but an unusable cache gives one warning per process and nullopt.
    std::optional<std::filesystem::path> store(const std::string& key, std::span<const char> binary,
                                               DiskCacheMeta meta) const;
    // Removes an entry that turned out to be unusable, with one warning per key per process.
    void discard(const std::string& key, std::string_view reason) const;

private:
    class Reader;
    struct Shared;

    std::filesystem::path root_;
    std::shared_ptr<Shared> shared_;  // the policy, and the seal once read; shared by copies
};

}  // namespace mqajit
