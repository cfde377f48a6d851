#pragma once
// A 128-bit content hash (two independent FNV-1a 64 lanes) printed as 32 hex digits.
// It names cache entries and checks their contents; it is not a cryptographic hash.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace mqajit {

class Hasher {
public:
    Hasher& add(std::string_view bytes);
    Hasher& add_bytes(std::span<const char> bytes) { return add(std::string_view(bytes.data(), bytes.size())); }
    // Adds a field and a separator, so ("ab","c") and ("a","bc") hash differently.
    Hasher& field(std::string_view bytes);
    std::string hex() const;

private:
    std::uint64_t low_ = 0xcbf29ce484222325ull;
    std::uint64_t high_ = 0x84222325cbf29ce4ull;
};

std::string hash_hex(std::string_view bytes);

}  // namespace mqajit
