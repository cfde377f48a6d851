#pragma once
// Reading and writing whole files safely: readers take regular files only, up to a size limit
// (a FIFO, a device or /dev/zero would block or never end), and writers write a uniquely named
// file beside the target and rename it into place, so readers and concurrent writers each see a
// whole file.

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace mqajit {

// An open file descriptor, closed when the object goes away.
class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    ~UniqueFd();
    UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept;
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;

    int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }
    int release() {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }
    // Closes now and reports the result (close can report a failed delayed write).
    int close();

private:
    int fd_ = -1;
};

// Limits for the files mqajit reads whole: far above any real one, low enough to refuse a runaway.
inline constexpr std::size_t kMaxTableFileBytes = std::size_t{256} << 20;  // CSV and JSON inputs

// "a FIFO", "a folder", "a character device", ...: what a file that is not regular is.
std::string file_type_name(mode_t mode);

// Reads a regular file (symbolic links followed, as for any path a user names). Throws Error(io)
// naming `path` for a missing or unreadable file, a FIFO, device or folder, and a file over
// `max_bytes`; `what` names the file in the message ("tuning table").
std::string read_regular_file(const std::filesystem::path& path, std::string_view what,
                              std::size_t max_bytes = kMaxTableFileBytes);

// The lines of a text file read whole, each without its "\n" or "\r\n" (a last line without a
// newline counts; a final newline adds no empty line), a leading UTF-8 byte-order mark dropped.
std::vector<std::string_view> text_lines(std::string_view text);

// Reads exactly `size` bytes of an open regular file from its start. False when it holds fewer
// or more (it changed since it was measured) or a read fails; errno then says why, if any.
bool read_exact(int fd, std::size_t size, char* out);
// Writes all of `bytes`; false (errno set) on failure.
bool write_all(int fd, std::string_view bytes);

// A fresh, empty file beside `target` with a unique name (".<name>.XXXXXX"), opened for writing
// with `mode`. Throws Error(io).
UniqueFd create_sibling_temp(const std::filesystem::path& target, std::filesystem::path& temp_path,
                             mode_t mode = 0644);

// Throws Error(invalid_argument) when `output` is one of `inputs` (the same file, by any path):
// writing it would destroy what the command reads.
void require_distinct_output(const std::filesystem::path& output, const std::vector<std::filesystem::path>& inputs);

// Writes `bytes` into a unique file beside `path`, flushes it and renames it onto `path`: `mode`
// for a new file, an existing file's own permissions otherwise. A link is followed (the file it
// names is replaced); a pipe or device (/dev/null, /dev/stdout) is written in place. Throws
// Error(io) naming `path`; nothing is left behind on failure.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes, mode_t mode = 0644);

}  // namespace mqajit
