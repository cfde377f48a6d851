#pragma once
// One kernel cache entry being written. It is built in <root>/tmp/<unique>/ and published by
// renaming that folder to <root>/<key>, so readers see a whole entry or none; an entry that is never
// published is removed when the object goes away (an exception included). Folders and files get
// the trust policy's modes: private to this user, or shared with the cache group.

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "core/trusted_path.hpp"

namespace mqajit {

class DiskCacheEntry {
public:
    // Creates the temporary folder; throws Error(io) when the cache root cannot be written.
    DiskCacheEntry(std::filesystem::path root, std::string key, const TrustPolicy& policy);
    ~DiskCacheEntry();
    DiskCacheEntry(const DiskCacheEntry&) = delete;
    DiskCacheEntry& operator=(const DiskCacheEntry&) = delete;

    // Writes `name` inside the entry and flushes it to disk; throws Error(io).
    void write_file(std::string_view name, std::span<const char> bytes);
    // Moves the entry into place and returns <root>/<key>. If another process published the same
    // key first, that entry stands (same key, same content) and this one is dropped. A file that is
    // not a folder where the entry belongs is removed first. Throws Error(io).
    std::filesystem::path publish();

    const std::filesystem::path& temp_path() const { return temp_path_; }

private:
    std::filesystem::path root_;
    std::string key_;
    TrustPolicy policy_;
    std::filesystem::path temp_path_;
    bool published_ = false;
};

// Creates a fresh folder <parent>/<prefix>XXXXXX with the policy's folder mode, creating <parent>
// (and replacing a file that is not a folder there); throws Error(io).
std::filesystem::path make_unique_folder(const std::filesystem::path& parent, std::string_view prefix,
                                         const TrustPolicy& policy);
// Flushes a folder's entries (new names, renames) to disk; throws Error(io).
void sync_folder(const std::filesystem::path& folder);

}  // namespace mqajit
