#include "core/hash.hpp"

#include <fmt/format.h>

namespace mqajit {

Hasher& Hasher::add(std::string_view bytes) {
    constexpr std::uint64_t kPrime = 0x100000001b3ull;
    for (unsigned char byte : bytes) {
        low_ = (low_ ^ byte) * kPrime;
        high_ = (high_ ^ static_cast<unsigned char>(byte + 0x5b)) * kPrime;
        high_ ^= high_ >> 29;
    }
    return *this;
}

Hasher& Hasher::field(std::string_view bytes) {
    add(std::to_string(bytes.size()));
    add(":");
    return add(bytes);
}

std::string Hasher::hex() const { return fmt::format("{:016x}{:016x}", high_, low_); }

std::string hash_hex(std::string_view bytes) { return Hasher().add(bytes).hex(); }

}  // namespace mqajit
