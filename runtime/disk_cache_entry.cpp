#include "runtime/disk_cache_entry.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/check.hpp"

namespace mqajit {
namespace {

// An open file descriptor, closed when the object goes away.
class UniqueFd {
public:
    explicit UniqueFd(int fd) : fd_(fd) {}
    ~UniqueFd() {
        if (fd_ >= 0) ::close(fd_);
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    int get() const { return fd_; }
    // Closes now and reports the result (close can report a failed delayed write).
    int close() {
        const int result = ::close(fd_);
        fd_ = -1;
        return result;
    }

private:
    int fd_;
};

[[noreturn]] void fail_io(std::string_view action, const std::filesystem::path& path, int error) {
    MQAJIT_FAIL(io, "cannot {} {}: {}; check the free space and permissions there, or point MQAJIT_CACHE_DIR at a "
                    "writable folder",
                action, path.string(), std::strerror(error));
}

}  // namespace

std::filesystem::path make_unique_folder(const std::filesystem::path& parent, std::string_view prefix) {
    std::error_code error;
    std::filesystem::create_directories(parent, error);
    if (error) fail_io("create", parent, error.value());
    std::string pattern = (parent / (std::string(prefix) + "XXXXXX")).string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (::mkdtemp(buffer.data()) == nullptr) fail_io("create a folder in", parent, errno);
    return std::filesystem::path(buffer.data());
}

void sync_folder(const std::filesystem::path& folder) {
    UniqueFd fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.get() < 0) fail_io("open", folder, errno);
    if (::fsync(fd.get()) != 0) fail_io("flush", folder, errno);
}

DiskCacheEntry::DiskCacheEntry(std::filesystem::path root, std::string key)
    : root_(std::move(root)), key_(std::move(key)) {
    temp_path_ = make_unique_folder(root_ / "tmp", key_.substr(0, 8) + "-");
}

DiskCacheEntry::~DiskCacheEntry() {
    if (published_) return;
    std::error_code ignored;
    std::filesystem::remove_all(temp_path_, ignored);
}

void DiskCacheEntry::write_file(std::string_view name, std::span<const char> bytes) {
    MQAJIT_CHECK_KIND(internal, !published_, "{} was already published; write files before publish()", key_);
    const std::filesystem::path path = temp_path_ / name;
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (fd.get() < 0) fail_io("create", path, errno);
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t result = ::write(fd.get(), bytes.data() + written, bytes.size() - written);
        if (result < 0 && errno == EINTR) continue;
        if (result < 0) fail_io("write", path, errno);
        written += static_cast<std::size_t>(result);
    }
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
    if (::rename(temp_path_.c_str(), final_path.c_str()) != 0) {
        const int error = errno;
        if (error != EEXIST && error != ENOTEMPTY) fail_io("publish a kernel cache entry at", final_path, error);
        return final_path;  // the destructor removes our unpublished copy
    }
    published_ = true;
    sync_folder(root_);
    return final_path;
}

}  // namespace mqajit
