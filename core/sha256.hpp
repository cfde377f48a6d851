#pragma once
// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104): the kernel cache seals its entries with them,
// since core/hash.hpp's content hash is not cryptographic.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace mqajit {

using Sha256Digest = std::array<std::uint8_t, 32>;

class Sha256 {
public:
    Sha256();
    Sha256& add(std::string_view bytes);
    Sha256& add(std::span<const std::uint8_t> bytes);
    Sha256Digest finish();  // the object is spent afterwards

private:
    void compress(const std::uint8_t* block);

    std::array<std::uint32_t, 8> state_;
    std::array<std::uint8_t, 64> buffer_{};
    std::size_t buffered_ = 0;
    std::uint64_t total_bytes_ = 0;
};

Sha256Digest sha256(std::string_view bytes);
Sha256Digest hmac_sha256(std::span<const std::uint8_t> key, std::string_view message);

std::string to_hex(std::span<const std::uint8_t> bytes);
// Compares without an early exit, so the time taken says nothing about where two MACs differ.
bool equal_in_constant_time(std::string_view a, std::string_view b);

}  // namespace mqajit
