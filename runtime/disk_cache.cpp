#include "runtime/disk_cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "core/files.hpp"
#include "core/hash.hpp"
#include "core/log.hpp"
#include "core/settings.hpp"
#include "core/sha256.hpp"
#include "runtime/disk_cache_entry.hpp"
#include "runtime/disk_cache_seal.hpp"

namespace mqajit {
namespace {

constexpr const char* kBinaryFile = "kernel.bin";
constexpr const char* kMetaFile = "meta.json";
constexpr const char* kSealFile = "meta.hmac";
constexpr std::size_t kMaxSealBytes = 256;

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

// One file of an entry: read without following a link, a regular file of a trusted owner, at
// most `max_bytes`, or exactly `exact` bytes when given. `problem` says why not; `missing` is set
// when the file is not there at all.
struct EntryFile {
    std::optional<std::string> bytes;
    std::string problem;
    bool missing = false;
};

EntryFile read_entry_file(int entry_fd, const char* name, const TrustPolicy& policy, std::size_t max_bytes,
                          std::optional<std::uint64_t> exact = std::nullopt) {
    EntryFile file;
    // NOTES: O_NONBLOCK: a FIFO must not block the open; it is refused by type right after.
    UniqueFd fd(::openat(entry_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) {
        file.missing = errno == ENOENT;
        file.problem = errno == ELOOP    ? fmt::format("{} is a symbolic link", name)
                       : file.missing    ? fmt::format("{} is missing", name)
                                         : fmt::format("{} cannot be opened: {}", name, std::strerror(errno));
        return file;
    }
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0) {
        file.problem = fmt::format("{} cannot be inspected: {}", name, std::strerror(errno));
        return file;
    }
    if (!S_ISREG(info.st_mode)) {
        file.problem = fmt::format("{} is not a regular file (it is {})", name, file_type_name(info.st_mode));
        return file;
    }
    if (auto problem = policy.entry_problem(info, name)) {
        file.problem = *problem;
        return file;
    }
    const auto size = static_cast<std::uint64_t>(info.st_size);
    if (exact && size != *exact) {
        file.problem = fmt::format("{} has {} bytes where meta.json records {}", name, size, *exact);
        return file;
    }
    if (size > max_bytes) {
        file.problem = fmt::format("{} has {} bytes, more than the {} a cache entry may hold", name, size, max_bytes);
        return file;
    }
    std::string bytes(static_cast<std::size_t>(size), '\0');
    if (!read_exact(fd.get(), bytes.size(), bytes.data())) {
        file.problem = errno != 0 ? fmt::format("{} cannot be read: {}", name, std::strerror(errno))
                                  : fmt::format("{} changed size while it was read", name);
        return file;
    }
    file.bytes = std::move(bytes);
    return file;
}

// Whether <root>/<key> still names the folder `entry` that was opened (another process may have
// removed it, or published a new one, meanwhile).
bool still_there(int root_fd, const std::string& key, const struct stat& entry) {
    struct stat now {};
    return ::fstatat(root_fd, key.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_ino == entry.st_ino &&
           now.st_dev == entry.st_dev;
}

// Moves a folder out of the way atomically, then deletes it, so no reader sees it half removed.
void remove_entry_folder(const std::filesystem::path& root, const std::filesystem::path& entry,
                         const TrustPolicy& policy) {
    std::error_code ignored;
    try {
        const std::filesystem::path graveyard = make_unique_folder(root / "tmp", "removed-", policy);
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

struct DiskCache::Shared {
    std::optional<TrustPolicy> policy;  // nullopt: MQAJIT_CACHE_GROUP could not be used
    std::string policy_problem;
    std::mutex mutex;
    std::optional<CacheSeal> seal;  // read, or made, once
};

// One look at the cache root: checked, open, with its seal when there is one.
class DiskCache::Reader {
public:
    enum class State { ok, absent, unusable };

    // `create`: make the root (and the seal) when missing, and throw Error(io) when unusable.
    Reader(const DiskCache& cache, bool create) : cache_(cache) {
        Shared& shared = *cache.shared_;
        if (!shared.policy) {
            fail(shared.policy_problem, create);
            return;
        }
        policy_ = &*shared.policy;
        const std::filesystem::path& root = cache.root_;
        if (create) {
            try {
                create_trusted_folders(root, *policy_);
            } catch (const Error& e) {
                fail(e.what(), create);
            }
        }
        if (auto problem = untrusted_folder_problem(root, *policy_)) {
            fail(*problem, create);
            return;
        }
        fd_ = UniqueFd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!fd_) {
            if (errno == ENOENT && !create) {
                state_ = State::absent;
                return;
            }
            fail(fmt::format("{} cannot be opened: {}", root.string(), std::strerror(errno)), create);
            return;
        }
        state_ = State::ok;
        const std::lock_guard lock(shared.mutex);
        if (!shared.seal) {
            struct stat info {};
            const bool exists = ::fstatat(fd_.get(), CacheSeal::kKeyFile, &info, AT_SYMLINK_NOFOLLOW) == 0;
            if (!exists && !create) return;  // no key yet: nothing in this cache can be sealed
            try {
                shared.seal = CacheSeal::open(fd_.get(), root, *policy_, create);
            } catch (const Error& e) {
                fail(e.what(), create);
                return;
            }
        }
        seal_ = &*shared.seal;
    }

    State state() const { return state_; }
    int fd() const { return fd_.get(); }
    const TrustPolicy& policy() const { return *policy_; }
    const CacheSeal* seal() const { return seal_; }

    // The entry's checked metadata and its folder's stat; nullopt and `problem` when not usable
    // (`gone` when it vanished meanwhile).
    std::optional<DiskCacheMeta> read_meta(const std::string& key, UniqueFd& entry_fd, struct stat& entry,
                                           std::string& problem, bool& gone) const {
        gone = false;
        entry_fd = UniqueFd(::openat(fd(), key.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!entry_fd) {
            gone = errno == ENOENT;
            problem = errno == ENOTDIR || errno == ELOOP
                          ? "it is not a folder"
                          : fmt::format("the folder cannot be opened: {}", std::strerror(errno));
            return std::nullopt;
        }
        if (::fstat(entry_fd.get(), &entry) != 0) {
            problem = fmt::format("the folder cannot be inspected: {}", std::strerror(errno));
            return std::nullopt;
        }
        if (auto untrusted = policy().entry_problem(entry, "its folder")) {
            problem = *untrusted;
            return std::nullopt;
        }
        auto vanished = [&](const EntryFile& file) { return file.missing && !still_there(fd(), key, entry); };
        const EntryFile seal_file = read_entry_file(entry_fd.get(), kSealFile, policy(), kMaxSealBytes);
        if (!seal_file.bytes) {
            gone = vanished(seal_file);
            problem = seal_file.missing ? "it was not sealed with this cache's key (it has no meta.hmac: an entry of "
                                          "an older mqajit, or not written by this cache)"
                                        : seal_file.problem;
            return std::nullopt;
        }
        const EntryFile meta_file = read_entry_file(entry_fd.get(), kMetaFile, policy(), kMaxMetaBytes);
        if (!meta_file.bytes) {
            gone = vanished(meta_file);
            problem = meta_file.problem;
            return std::nullopt;
        }
        if (seal_ == nullptr || !seal_->verify(key, *meta_file.bytes, *seal_file.bytes)) {
            problem = "it was not sealed with this cache's key (planted by someone without the key, or copied from "
                      "another cache)";
            return std::nullopt;
        }
        const nlohmann::json json = nlohmann::json::parse(*meta_file.bytes, nullptr, /*allow_exceptions=*/false);
        if (json.is_discarded()) {
            problem = "meta.json is not valid JSON";
            return std::nullopt;
        }
        try {
            DiskCacheMeta meta = meta_from_json(json);
            if (meta.key != key) {
                problem = fmt::format("meta.json names key {}", meta.key);
                return std::nullopt;
            }
            return meta;
        } catch (const Error& e) {
            problem = e.what();
            return std::nullopt;
        }
    }

private:
    void fail(const std::string& problem, bool create) {
        state_ = State::unusable;
        const std::string message = fmt::format("the kernel cache at {} cannot be used: {}", cache_.root_.string(),
                                                problem);
        if (create) {
            MQAJIT_FAIL(io, "{}; point MQAJIT_CACHE_DIR at a folder of your own (docs/settings.md says what is "
                        "checked)", message);
        }
        warn_once("unusable " + cache_.root_.string(),
                  message + "; kernels are compiled and kept in memory only. Point MQAJIT_CACHE_DIR at a folder of "
                            "your own (docs/settings.md says what is checked)");
    }

    const DiskCache& cache_;
    State state_ = State::unusable;
    const TrustPolicy* policy_ = nullptr;
    const CacheSeal* seal_ = nullptr;
    UniqueFd fd_;
};

DiskCache::DiskCache(std::filesystem::path root) : root_(std::move(root)), shared_(std::make_shared<Shared>()) {
    try {
        shared_->policy = TrustPolicy::for_process(settings().cache_group);
    } catch (const Error& e) {
        shared_->policy_problem = e.what();
    }
}

DiskCache::DiskCache(std::filesystem::path root, TrustPolicy policy)
    : root_(std::move(root)), shared_(std::make_shared<Shared>()) {
    shared_->policy = std::move(policy);
}

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
    try {
        const Reader root(*this, /*create=*/false);
        if (root.state() != Reader::State::ok) return std::nullopt;
        UniqueFd entry_fd;
        struct stat entry {};
        std::string problem;
        bool gone = false;
        std::optional<DiskCacheMeta> meta = root.read_meta(key, entry_fd, entry, problem, gone);
        if (!meta) {
            if (!gone) discard(key, problem);
            return std::nullopt;
        }
        if (meta->binary_bytes > kMaxBinaryBytes) {
            discard(key, fmt::format("meta.json records {} bytes of kernel.bin, more than the {} an entry may hold",
                                     meta->binary_bytes, kMaxBinaryBytes));
            return std::nullopt;
        }
        const EntryFile binary = read_entry_file(entry_fd.get(), kBinaryFile, root.policy(), kMaxBinaryBytes,
                                                 meta->binary_bytes);
        if (!binary.bytes) {
            if (!(binary.missing && !still_there(root.fd(), key, entry))) discard(key, binary.problem);
            return std::nullopt;
        }
        if (to_hex(sha256(*binary.bytes)) != meta->binary_sha256) {
            discard(key, "kernel.bin does not match the SHA-256 in meta.json");
            return std::nullopt;
        }
        return DiskCacheHit{.entry = root_ / key,
                            .binary = std::vector<char>(binary.bytes->begin(), binary.bytes->end()),
                            .meta = std::move(*meta)};
    } catch (const std::exception& e) {
        warn_once("read " + key, fmt::format("cannot read kernel cache entry {}: {}; compiling the kernel instead",
                                             (root_ / key).string(), e.what()));
        return std::nullopt;
    }
}

std::vector<DiskCacheMeta> DiskCache::entries() const {
    std::vector<DiskCacheMeta> found;
    try {
        const Reader root(*this, /*create=*/false);
        if (root.state() != Reader::State::ok) return found;
        UniqueFd listing(::dup(root.fd()));
        DIR* folder = listing ? ::fdopendir(listing.get()) : nullptr;
        if (folder == nullptr) return found;
        listing.release();  // the DIR owns it now
        std::vector<std::string> keys;
        while (const dirent* item = ::readdir(folder)) {
            if (is_valid_key(item->d_name)) keys.emplace_back(item->d_name);
        }
        ::closedir(folder);
        for (const std::string& key : keys) {
            UniqueFd entry_fd;
            struct stat entry {};
            std::string problem;
            bool gone = false;
            if (auto meta = root.read_meta(key, entry_fd, entry, problem, gone)) {
                found.push_back(std::move(*meta));
            } else {
                log().debug("kernel cache entry {} skipped: {}", (root_ / key).string(), problem);
            }
        }
    } catch (const std::exception& e) {
        log().debug("cannot list the kernel cache at {}: {}", root_.string(), e.what());
    }
    return found;
}

std::filesystem::path DiskCache::publish(const std::string& key, std::span<const char> binary,
                                         DiskCacheMeta meta) const {
    MQAJIT_CHECK_KIND(internal, is_valid_key(key), "'{}' is not a kernel cache key; make keys with DiskCache::key_for",
                      key);
    const Reader root(*this, /*create=*/true);
    meta.key = key;
    meta.binary_bytes = binary.size();
    meta.binary_sha256 = to_hex(sha256(std::string_view(binary.data(), binary.size())));
    meta.created = utc_timestamp();
    const std::string meta_text = to_json(meta).dump(2) + "\n";
    const std::string seal = root.seal()->seal(key, meta_text);

    DiskCacheEntry entry(root_, key, root.policy());
    entry.write_file(kBinaryFile, binary);
    entry.write_file(kMetaFile, std::span<const char>(meta_text.data(), meta_text.size()));
    entry.write_file(kSealFile, std::span<const char>(seal.data(), seal.size()));
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
    if (!is_valid_key(key) || !shared_->policy) return;
    const std::filesystem::path entry = root_ / key;
    struct stat info {};
    if (::lstat(entry.c_str(), &info) == 0 && !S_ISDIR(info.st_mode)) {
        // NOTES: a file or a link where an entry folder belongs would make every publish of the key
        // fail; unlink never follows a link, so nothing outside the cache is touched.
        ::unlink(entry.c_str());
    } else {
        remove_entry_folder(root_, entry, *shared_->policy);
    }
    warn_once("damaged " + key, fmt::format("kernel cache entry {} was damaged or not to be trusted ({}); removed it, "
                                            "the kernel will be rebuilt",
                                            entry.string(), reason));
}

}  // namespace mqajit
