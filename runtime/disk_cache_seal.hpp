#pragma once
// The key that seals a kernel cache's entries. Each cache root holds its own 32 random bytes in
// `seal.key`, readable by this user only (or by the shared group), made on first use. An entry's
// meta.hmac is the HMAC-SHA256, under that key, of its key and its meta.json; meta.json records the
// SHA-256 of kernel.bin. Whoever cannot read the key cannot make an entry this cache will load:
// not a user who can write a file in a folder they should not, not an entry copied from another
// cache or machine.

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/trusted_path.hpp"

namespace mqajit {

class CacheSeal {
public:
    static constexpr const char* kKeyFile = "seal.key";

    // Reads <root>/seal.key through `root_fd`, creating it first when absent and `create` is set
    // (a concurrent creator's key wins, so all share one). Throws Error(io) naming what is wrong:
    // missing, not a regular file, owned by someone untrusted, readable by others.
    static CacheSeal open(int root_fd, const std::filesystem::path& root, const TrustPolicy& policy, bool create);

    // The seal of an entry: hex HMAC-SHA256 over its key and its meta.json text.
    std::string seal(std::string_view entry_key, std::string_view meta_text) const;
    bool verify(std::string_view entry_key, std::string_view meta_text, std::string_view seal) const;

private:
    std::array<std::uint8_t, 32> key_{};
};

}  // namespace mqajit
