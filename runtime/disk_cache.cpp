#include "runtime/disk_cache.hpp"

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "core/hash.hpp"
#include "core/log.hpp"
#include "runtime/disk_cache_entry.hpp"

namespace mqajit {
namespace {

constexpr const char* kBinaryFile = "kernel.bin";
constexpr const char* kMetaFile = "meta.json";

// Logs `message` the first time `topic` is seen in this process.
void warn_once(const std::string& topic, const std::string& message) {
    static std::mutex mutex;
    static std::set<std::string> seen;
    {
        const std::lock_guard lock(mutex);
        if (!seen.insert(topic).second) return;
    }
    log().warn("{}", message);
}

bool is_valid_key(std::string_view key) {
    return key.size() == 32 && key.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::optional<std::vector<char>> read_whole_file(const std::filesystem::path& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) return std::nullopt;
    std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (file.bad()) return std::nullopt;
    return bytes;
}

// Moves a folder out of the way atomically, then deletes it, so no reader sees it half removed.
void remove_entry_folder(const std::filesystem::path& root, const std::filesystem::path& entry) {
    std::error_code ignored;
    try {
        const std::filesystem::path graveyard = make_unique_folder(root / "tmp", "removed-");
        // NOTES: renaming a folder onto an empty folder replaces it (rename(2)).
        if (::rename(entry.c_str(), graveyard.c_str()) != 0) {
            const int error = errno;
            std::filesystem::remove_all(graveyard, ignored);
            // ENOENT: another process removed it first, and may since have published a good one.
            if (error != ENOENT) std::filesystem::remove_all(entry, ignored);
            return;
        }
        std::filesystem::remove_all(graveyard, ignored);
    } catch (const Error&) {
        std::filesystem::remove_all(entry, ignored);
    }
}

}  // namespace

DiskCache::DiskCache(std::filesystem::path root) : root_(std::move(root)) {}

std::string DiskCache::source_hash(const CompileRequest& request) {
    Hasher hasher;
    hasher.field(request.source);
    for (const EmbeddedFile& header : request.headers) hasher.field(header.name).field(header.text);
    return hasher.hex();
}

std::string DiskCache::key_for(const Compiler& compiler, const CompileRequest& request) {
    // NOTES: headers are hashed too: a generated source only instantiates a template header, so a
    // changed template leaves the source alone and must still give a new key.
    Hasher hasher;
    hasher.field(compiler.name()).field(compiler.version()).field(request.arch).field(request.kernel_name);
    const std::vector<std::string> options = effective_options(compiler, request);
    hasher.field(std::to_string(options.size()));
    for (const std::string& option : options) hasher.field(option);
    hasher.field(source_hash(request));
    return hasher.hex();
}

std::optional<DiskCacheHit> DiskCache::load(const std::string& key) const {
    if (!is_valid_key(key)) return std::nullopt;
    const std::filesystem::path entry = root_ / key;
    std::error_code error;
    if (!std::filesystem::is_directory(entry, error)) return std::nullopt;

    try {
        const auto meta_bytes = read_whole_file(entry / kMetaFile);
        if (!meta_bytes) {
            // Gone since the check above: another process removed it, which is a plain miss.
            if (!std::filesystem::exists(entry, error)) return std::nullopt;
            discard(key, "meta.json is missing or unreadable");
            return std::nullopt;
        }
        const nlohmann::json json = nlohmann::json::parse(meta_bytes->begin(), meta_bytes->end(), nullptr, false);
        if (json.is_discarded()) {
            discard(key, "meta.json is not valid JSON");
            return std::nullopt;
        }
        DiskCacheMeta meta;
        try {
            meta = meta_from_json(json);
        } catch (const Error& e) {
            discard(key, e.what());
            return std::nullopt;
        }
        if (meta.key != key) {
            discard(key, fmt::format("meta.json names key {}", meta.key));
            return std::nullopt;
        }
        auto binary = read_whole_file(entry / kBinaryFile);
        if (!binary) {
            if (!std::filesystem::exists(entry, error)) return std::nullopt;
            discard(key, "kernel.bin is missing or unreadable");
            return std::nullopt;
        }
        if (binary->size() != meta.binary_bytes) {
            discard(key, fmt::format("kernel.bin has {} bytes where meta.json records {}", binary->size(),
                                     meta.binary_bytes));
            return std::nullopt;
        }
        if (hash_hex(std::string_view(binary->data(), binary->size())) != meta.binary_hash) {
            discard(key, "kernel.bin does not match the hash in meta.json");
            return std::nullopt;
        }
        return DiskCacheHit{.entry = entry, .binary = std::move(*binary), .meta = std::move(meta)};
    } catch (const std::exception& e) {
        warn_once("read " + key, fmt::format("cannot read kernel cache entry {}: {}; compiling the kernel instead",
                                             entry.string(), e.what()));
        return std::nullopt;
    }
}

std::filesystem::path DiskCache::publish(const std::string& key, std::span<const char> binary,
                                         DiskCacheMeta meta) const {
    MQAJIT_CHECK_KIND(internal, is_valid_key(key), "'{}' is not a kernel cache key; make keys with DiskCache::key_for",
                      key);
    meta.key = key;
    meta.binary_bytes = binary.size();
    meta.binary_hash = hash_hex(std::string_view(binary.data(), binary.size()));
    meta.created = utc_timestamp();
    const std::string meta_text = to_json(meta).dump(2) + "\n";

    DiskCacheEntry entry(root_, key);
    entry.write_file(kBinaryFile, binary);
    entry.write_file(kMetaFile, std::span<const char>(meta_text.data(), meta_text.size()));
    return entry.publish();
}

std::optional<std::filesystem::path> DiskCache::store(const std::string& key, std::span<const char> binary,
                                                      DiskCacheMeta meta) const {
    try {
        return publish(key, binary, std::move(meta));
    } catch (const std::exception& e) {
        warn_once("write " + root_.string(),
                  fmt::format("the kernel cache at {} cannot be written ({}); kernels will be compiled in memory only",
                              root_.string(), e.what()));
        return std::nullopt;
    }
}

void DiskCache::discard(const std::string& key, std::string_view reason) const {
    if (!is_valid_key(key)) return;
    const std::filesystem::path entry = root_ / key;
    remove_entry_folder(root_, entry);
    warn_once("damaged " + key, fmt::format("kernel cache entry {} was damaged ({}); removed it, the kernel will be "
                                            "rebuilt",
                                            entry.string(), reason));
}

}  // namespace mqajit
