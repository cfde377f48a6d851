#include "runtime/disk_cache_seal.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/files.hpp"
#include "core/sha256.hpp"

namespace mqajit {
namespace {

std::array<std::uint8_t, 32> random_key() {
    std::array<std::uint8_t, 32> key{};
    std::size_t done = 0;
    while (done < key.size()) {
        const ssize_t got = ::getrandom(key.data() + done, key.size() - done, 0);
        if (got < 0 && errno == EINTR) continue;
        MQAJIT_CHECK_KIND(io, got > 0, "cannot draw random bytes for the kernel cache key: {}", std::strerror(errno));
        done += static_cast<std::size_t>(got);
    }
    return key;
}

// Writes a new key beside the final name, then links it into place: link(2) never replaces, so
// when several processes race to make the key, exactly one key results and every process reads it.
void create_key(const std::filesystem::path& root, const TrustPolicy& policy) {
    const std::filesystem::path final_path = root / CacheSeal::kKeyFile;
    std::filesystem::path temp;
    UniqueFd fd = create_sibling_temp(final_path, temp, policy.file_mode());
    const auto key = random_key();
    const bool written = (!policy.group || ::fchown(fd.get(), static_cast<uid_t>(-1), *policy.group) == 0) &&
                         write_all(fd.get(), std::string_view(reinterpret_cast<const char*>(key.data()), key.size())) &&
                         ::fsync(fd.get()) == 0 && fd.close() == 0;
    const int error = errno;
    const bool linked = written && (::link(temp.c_str(), final_path.c_str()) == 0 || errno == EEXIST);
    const int link_error = errno;
    ::unlink(temp.c_str());
    MQAJIT_CHECK_KIND(io, written, "cannot write the kernel cache key {}: {}", final_path.string(), std::strerror(error));
    MQAJIT_CHECK_KIND(io, linked, "cannot create the kernel cache key {}: {}", final_path.string(),
                      std::strerror(link_error));
}

}  // namespace

CacheSeal CacheSeal::open(int root_fd, const std::filesystem::path& root, const TrustPolicy& policy, bool create) {
    const std::filesystem::path path = root / kKeyFile;
    UniqueFd fd(::openat(root_fd, kKeyFile, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd && errno == ENOENT && create) {
        create_key(root, policy);
        fd = UniqueFd(::openat(root_fd, kKeyFile, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    }
    if (!fd) {
        MQAJIT_CHECK_KIND(io, errno != ELOOP, "the kernel cache key {} is a symbolic link; remove it (every cached "
                          "kernel is then rebuilt)", path.string());
        MQAJIT_FAIL(io, "cannot read the kernel cache key {}: {}", path.string(), std::strerror(errno));
    }
    struct stat info {};
    MQAJIT_CHECK_KIND(io, ::fstat(fd.get(), &info) == 0, "cannot inspect {}: {}", path.string(), std::strerror(errno));
    MQAJIT_CHECK_KIND(io, S_ISREG(info.st_mode), "the kernel cache key {} is {}; remove it (every cached kernel is "
                      "then rebuilt)", path.string(), file_type_name(info.st_mode));
    if (auto problem = policy.entry_problem(info, "the kernel cache key " + path.string())) {
        MQAJIT_FAIL(io, "{}; remove it (every cached kernel is then rebuilt)", *problem);
    }
    const bool group_may_read = policy.group && info.st_gid == *policy.group;
    const mode_t readable_by_others = S_IRWXO | (group_may_read ? 0 : S_IRWXG);
    MQAJIT_CHECK_KIND(io, (info.st_mode & readable_by_others) == 0,
                      "the kernel cache key {} can be read by other users (mode {:04o}), who could then seal entries "
                      "this cache would load; `chmod {} {}`, or remove it (every cached kernel is then rebuilt)",
                      path.string(), info.st_mode & 07777, group_may_read ? "640" : "600", path.string());
    CacheSeal seal;
    MQAJIT_CHECK_KIND(io, static_cast<std::size_t>(info.st_size) == seal.key_.size() &&
                              read_exact(fd.get(), seal.key_.size(), reinterpret_cast<char*>(seal.key_.data())),
                      "the kernel cache key {} is not {} bytes; remove it (every cached kernel is then rebuilt)",
                      path.string(), seal.key_.size());
    return seal;
}

std::string CacheSeal::seal(std::string_view entry_key, std::string_view meta_text) const {
    // NOTES: the entry key goes in with its length, so no (key, meta) pair can pose as another.
    const std::string message = fmt::format("mqajit kernel cache entry\n{}\n{}\n", entry_key.size(), entry_key) +
                                std::string(meta_text);
    return to_hex(hmac_sha256(key_, message));
}

bool CacheSeal::verify(std::string_view entry_key, std::string_view meta_text, std::string_view seal_text) const {
    return equal_in_constant_time(seal(entry_key, meta_text), seal_text);
}

}  // namespace mqajit
