#include "core/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/check.hpp"
#include "core/utf8.hpp"

namespace mqajit {

UniqueFd::~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = other.release();
    }
    return *this;
}

int UniqueFd::close() {
    const int result = ::close(fd_);
    fd_ = -1;
    return result;
}

std::string file_type_name(mode_t mode) {
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISLNK(mode)) return "a symbolic link";
    return "a special file";
}

bool read_exact(int fd, std::size_t size, char* out) {
    std::size_t done = 0;
    while (done < size) {
        const ssize_t got = ::pread(fd, out + done, size - done, static_cast<off_t>(done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return false;
        if (got == 0) {
            errno = 0;  // shorter than measured: it changed, no read failed
            return false;
        }
        done += static_cast<std::size_t>(got);
    }
    char extra = 0;
    ssize_t more = 0;
    do {
        more = ::pread(fd, &extra, 1, static_cast<off_t>(size));
    } while (more < 0 && errno == EINTR);
    errno = 0;
    return more == 0;
}

bool write_all(int fd, std::string_view bytes) {
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t result = ::write(fd, bytes.data() + written, bytes.size() - written);
        if (result < 0 && errno == EINTR) continue;
        if (result < 0) return false;
        written += static_cast<std::size_t>(result);
    }
    return true;
}

std::vector<std::string_view> text_lines(std::string_view text) {
    if (text.starts_with(kUtf8ByteOrderMark)) text.remove_prefix(kUtf8ByteOrderMark.size());
    std::vector<std::string_view> lines;
    for (std::size_t pos = 0; pos < text.size();) {
        const std::size_t newline = std::min(text.find('\n', pos), text.size());
        std::string_view line = text.substr(pos, newline - pos);
        if (line.ends_with('\r')) line.remove_suffix(1);
        lines.push_back(line);
        pos = newline + 1;
    }
    return lines;
}

std::string read_regular_file(const std::filesystem::path& path, std::string_view what, std::size_t max_bytes) {
    // NOTES: O_NONBLOCK so that opening a FIFO returns at once instead of waiting for a writer;
    // it is refused by type right after.
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (!fd) {
        MQAJIT_FAIL(io, "cannot read {} {}: {}; check the path and its permissions", what, path.string(),
                    std::strerror(errno));
    }
    struct stat info {};
    MQAJIT_CHECK_KIND(io, ::fstat(fd.get(), &info) == 0, "cannot read {} {}: {}", what, path.string(),
                      std::strerror(errno));
    MQAJIT_CHECK_KIND(io, S_ISREG(info.st_mode), "{} {} is {}, not a regular file; give a file", what, path.string(),
                      file_type_name(info.st_mode));
    const auto size = static_cast<std::size_t>(info.st_size);
    MQAJIT_CHECK_KIND(io, size <= max_bytes, "{} {} is {} bytes; files over {} bytes are refused", what,
                      path.string(), size, max_bytes);
    std::string text(size, '\0');
    std::size_t done = 0;
    // NOTES: read to the end, not to st_size: the file may grow while it is read, up to the limit.
    while (true) {
        if (done == text.size()) {
            if (text.size() > max_bytes) {
                MQAJIT_FAIL(io, "{} {} grew past {} bytes while it was read; files over that are refused", what,
                            path.string(), max_bytes);
            }
            text.resize(std::max<std::size_t>(text.size() * 2, 4096));
        }
        const ssize_t got = ::read(fd.get(), text.data() + done, text.size() - done);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) MQAJIT_FAIL(io, "reading {} {} failed: {}; check the disk", what, path.string(), std::strerror(errno));
        if (got == 0) break;
        done += static_cast<std::size_t>(got);
    }
    MQAJIT_CHECK_KIND(io, done <= max_bytes, "{} {} grew past {} bytes while it was read; files over that are refused",
                      what, path.string(), max_bytes);
    text.resize(done);
    return text;
}

UniqueFd create_sibling_temp(const std::filesystem::path& target, std::filesystem::path& temp_path, mode_t mode) {
    const std::filesystem::path folder = target.has_parent_path() ? target.parent_path() : ".";
    std::string pattern = (folder / ("." + target.filename().string() + ".XXXXXX")).string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    UniqueFd fd(::mkostemp(buffer.data(), O_CLOEXEC));
    if (!fd) {
        MQAJIT_FAIL(io, "cannot create a file in {}: {}; check that the folder exists and is writable",
                    folder.string(), std::strerror(errno));
    }
    temp_path = buffer.data();
    if (::fchmod(fd.get(), mode) != 0) {
        const int error = errno;
        ::unlink(temp_path.c_str());
        MQAJIT_FAIL(io, "cannot set the permissions of {}: {}", temp_path.string(), std::strerror(error));
    }
    return fd;
}

namespace {

// Writes `bytes` straight into what `path` names (a pipe, a terminal, /dev/null): no rename can
// replace such a file.
void write_in_place(const std::filesystem::path& path, std::string_view bytes) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd || !write_all(fd.get(), bytes) || fd.close() != 0) {
        MQAJIT_FAIL(io, "cannot write {}: {}", path.string(), std::strerror(errno));
    }
}

}  // namespace

void require_distinct_output(const std::filesystem::path& output, const std::vector<std::filesystem::path>& inputs) {
    for (const auto& input : inputs) {
        std::error_code error;
        MQAJIT_CHECK(input.empty() || !std::filesystem::equivalent(output, input, error),
                     "the output {} is the input {}: writing it would destroy what is read; name another output",
                     output.string(), input.string());
    }
}

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes, mode_t mode) {
    // A link is followed: the file it names is replaced, and the link stays. A file that exists
    // keeps its permissions.
    std::error_code link_error;
    std::filesystem::path target = path;
    if (std::filesystem::is_symlink(path, link_error)) {
        const std::filesystem::path resolved = std::filesystem::weakly_canonical(path, link_error);
        if (!link_error && !resolved.empty()) target = resolved;
    }
    struct stat existing {};
    if (::stat(target.c_str(), &existing) == 0) {
        if (S_ISDIR(existing.st_mode)) MQAJIT_FAIL(io, "cannot write {}: it is a folder; name a file", path.string());
        if (!S_ISREG(existing.st_mode)) return write_in_place(target, bytes);
        mode = existing.st_mode & 07777;
    }
    std::filesystem::path temp;
    UniqueFd fd = create_sibling_temp(target, temp, mode);
    auto fail = [&](std::string_view action) {
        const int error = errno;
        ::unlink(temp.c_str());
        MQAJIT_FAIL(io, "cannot {} {}: {}; check free disk space and the folder's permissions", action,
                    target.string(), std::strerror(error));
    };
    if (!write_all(fd.get(), bytes)) fail("write");
    // NOTES: flushed before the rename, so a crash leaves the old file or the whole new one.
    if (::fsync(fd.get()) != 0) fail("flush");
    if (fd.close() != 0) fail("close");
    if (::rename(temp.c_str(), target.c_str()) != 0) fail("move the finished file onto");
}

}  // namespace mqajit
