#pragma once
// Compiled kernels on disk, shared by every process that uses the same folder:
//   <root>/<key>/kernel.bin   the binary
//   <root>/<key>/meta.json    what built it, and its size and hash
//   <root>/tmp/               entries being written (see DiskCacheEntry)
// A damaged entry is removed with one warning and reads as a miss; nothing here throws on a bad
// entry, and an unwritable folder only means kernels are not kept.

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

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
    // settings().cache_dir / "kernels" is the usual root. Nothing is created until something is stored.
    explicit DiskCache(std::filesystem::path root);

    const std::filesystem::path& root() const { return root_; }

    // The entry key (32 hex digits) of what `compiler` would build from `request`: it hashes the
    // compiler's name, version and effective options, the arch, the kernel name, the source and the
    // text of every header the source may include.
    static std::string key_for(const Compiler& compiler, const CompileRequest& request);
    // A hash of the source and its headers, recorded in meta.json.
    static std::string source_hash(const CompileRequest& request);

    // The entry, checked against its meta.json; nullopt when absent or damaged (then removed).
    std::optional<DiskCacheHit> load(const std::string& key) const;
    // Writes and publishes an entry (filling meta's key, size, hash and date); returns its folder.
    // Throws Error(io) when the folder cannot be written.
    std::filesystem::path publish(const std::string& key, std::span<const char> binary, DiskCacheMeta meta) const;
    // Like publish(), but an unwritable cache gives one warning per process and nullopt.
    std::optional<std::filesystem::path> store(const std::string& key, std::span<const char> binary,
                                               DiskCacheMeta meta) const;
    // Removes an entry that turned out to be unusable, with one warning per key per process.
    void discard(const std::string& key, std::string_view reason) const;

private:
    std::filesystem::path root_;
};

}  // namespace mqajit
