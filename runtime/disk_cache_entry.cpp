#include "runtime/disk_cache_entry.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/check.hpp"
#include "core/files.hpp"

namespace mqajit {
namespace {

[[noreturn]] void fail_io(std::string_view action, const std::filesystem::path& path, int error) {
    MQAJIT_FAIL(io, "cannot {} {}: {}; check the free space and permissions there, or point MQAJIT_CACHE_DIR at a "
                    "writable folder",
                action, path.string(), std::strerror(error));
}

void apply_policy(const std::filesystem::path& path, const TrustPolicy& policy, mode_t mode) {
    if (policy.group && ::chown(path.c_str(), static_cast<uid_t>(-1), *policy.group) != 0)
        fail_io("give to group " + policy.group_name, path, errno);
    if (::chmod(path.c_str(), mode) != 0) fail_io("set the mode of", path, errno);
}

}  // namespace

std::filesystem::path make_unique_folder(const std::filesystem::path& parent, std::string_view prefix,
                                         const TrustPolicy& policy) {
    if (::mkdir(parent.c_str(), policy.folder_mode()) == 0) {
        apply_policy(parent, policy, policy.folder_mode());
    } else if (errno != EEXIST) {
        fail_io("create", parent, errno);
    }
    struct stat info {};
    if (::lstat(parent.c_str(), &info) == 0 && !S_ISDIR(info.st_mode)) {
        // NOTES: only this user can write the cache root (it passed the trust check), so a file
        // here is damage, not someone else's: replace it.
        if (::unlink(parent.c_str()) != 0) fail_io("remove the file in the place of folder", parent, errno);
        if (::mkdir(parent.c_str(), policy.folder_mode()) != 0) fail_io("create", parent, errno);
        apply_policy(parent, policy, policy.folder_mode());
    }
    std::string pattern = (parent / (std::string(prefix) + "XXXXXX")).string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (::mkdtemp(buffer.data()) == nullptr) fail_io("create a folder in", parent, errno);
    const std::filesystem::path folder(buffer.data());
    if (policy.group) apply_policy(folder, policy, policy.folder_mode());
    return folder;
}

void sync_folder(const std::filesystem::path& folder) {
    UniqueFd fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) fail_io("open", folder, errno);
    if (::fsync(fd.get()) != 0) fail_io("flush", folder, errno);
}

DiskCacheEntry::DiskCacheEntry(std::filesystem::path root, std::string key, const TrustPolicy& policy)
    : root_(std::move(root)), key_(std::move(key)), policy_(policy) {
    temp_path_ = make_unique_folder(root_ / "tmp", key_.substr(0, 8) + "-", policy_);
}

DiskCacheEntry::~DiskCacheEntry() {
    if (published_) return;
    std::error_code ignored;
    std::filesystem::remove_all(temp_path_, ignored);
}

void DiskCacheEntry::write_file(std::string_view name, std::span<const char> bytes) {
    MQAJIT_CHECK_KIND(internal, !published_, "{} was already published; write files before publish()", key_);
    const std::filesystem::path path = temp_path_ / name;
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, policy_.file_mode()));
    if (!fd) fail_io("create", path, errno);
    if (policy_.group && ::fchown(fd.get(), static_cast<uid_t>(-1), *policy_.group) != 0)
        fail_io("give to group " + policy_.group_name, path, errno);
    if (::fchmod(fd.get(), policy_.file_mode()) != 0) fail_io("set the mode of", path, errno);
    if (!write_all(fd.get(), std::string_view(bytes.data(), bytes.size()))) fail_io("write", path, errno);
    // NOTES: fsync before the rename in publish(): otherwise a crash can leave a published entry
    // whose files are still empty on disk.
    if (::fsync(fd.get()) != 0) fail_io("flush", path, errno);
    if (fd.close() != 0) fail_io("close", path, errno);
}

std::filesystem::path DiskCacheEntry::publish() {
    MQAJIT_CHECK_KIND(internal, !published_, "{} was already published", key_);
    sync_folder(temp_path_);
    const std::filesystem::path final_path = root_ / key_;
    // NOTES: rename(2) of a folder is atomic and fails when the target exists and is not empty, so
    // exactly one of several processes building the same key publishes; the others drop their copy.
    for (int attempt = 0;; ++attempt) {
        if (::rename(temp_path_.c_str(), final_path.c_str()) == 0) break;
        const int error = errno;
        if (error == EEXIST || error == ENOTEMPTY) return final_path;  // the destructor removes our copy
        // A file (or a link) squats the entry's name: damage in a folder only we write; remove it, once.
        struct stat info {};
        if (error == ENOTDIR && attempt == 0 && ::lstat(final_path.c_str(), &info) == 0 && !S_ISDIR(info.st_mode) &&
            ::unlink(final_path.c_str()) == 0) {
            continue;
        }
        fail_io("publish a kernel cache entry at", final_path, error);
    }
    published_ = true;
    sync_folder(root_);
    return final_path;
}

}  // namespace mqajit
