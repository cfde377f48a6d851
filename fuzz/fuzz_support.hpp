#pragma once
// Shared by the fuzz targets: a private scratch folder per process, whole-file writes, and a check
// that aborts (a finding libFuzzer keeps) when a property the code promises does not hold.

#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>

#include "core/log.hpp"

namespace mqajit::fuzz {

// A folder of this process, made once (mkdtemp: private, unique): in /dev/shm where there is one,
// since the database targets flush files on every input and a disk makes them crawl.
inline const std::filesystem::path& scratch() {
    static const std::filesystem::path folder = [] {
        std::error_code error;
        const std::filesystem::path base = std::filesystem::is_directory("/dev/shm", error)
                                               ? std::filesystem::path("/dev/shm")
                                               : std::filesystem::temp_directory_path();
        std::string pattern = (base / "mqajit-fuzz-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) std::abort();
        // NOTES: warnings about damaged inputs are the expected outcome; printing each one would
        // slow the fuzzer down to the speed of the terminal.
        log().set_level(spdlog::level::off);
        return std::filesystem::path(pattern);
    }();
    static const bool removed_at_exit = [] {
        std::atexit([] {
            std::error_code ignored;
            std::filesystem::remove_all(folder, ignored);
        });
        return true;
    }();
    (void)removed_at_exit;
    return folder;
}

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// Splits the input at the first occurrences of `separator`: part i is the text before the i-th one.
template <std::size_t N>
inline std::array<std::string_view, N> split(std::string_view text, std::string_view separator) {
    std::array<std::string_view, N> parts{};
    for (std::size_t i = 0; i + 1 < N; ++i) {
        const std::size_t at = text.find(separator);
        if (at == std::string_view::npos) {
            parts[i] = text;
            return parts;
        }
        parts[i] = text.substr(0, at);
        text.remove_prefix(at + separator.size());
    }
    parts[N - 1] = text;
    return parts;
}

// A made-up device address for tensor `at` (1, 2, ...), `misaligned` bytes past a 256-byte
// boundary; never dereferenced. High enough that a compressed logits row's base (its key column 0,
// up to 2^31 elements before the row) stays a valid address, and 2^36 bytes apart.
inline void* fake_address(std::uintptr_t at, std::uintptr_t misaligned = 0) {
    return reinterpret_cast<void*>((std::uintptr_t{1} << 44) + (at << 36) + misaligned);
}

// Reads an input as a stream of little-endian integers; past its end, zeros.
class ByteReader {
public:
    ByteReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
    // The next `bytes` (1 to 4) bytes.
    std::uint32_t next(int bytes) { return static_cast<std::uint32_t>(take(bytes)); }
    std::int32_t next_int32() { return static_cast<std::int32_t>(next(4)); }
    std::int64_t next_int64() { return static_cast<std::int64_t>(take(8)); }
    // One of `values`, chosen by the next byte.
    template <class T>
    T pick(std::initializer_list<T> values) {
        return values.begin()[next(1) % values.size()];
    }

private:
    std::uint64_t take(int bytes) {
        std::uint64_t value = 0;
        for (int i = 0; i < bytes; ++i) value |= std::uint64_t{at_++ < size_ ? data_[at_ - 1] : 0u} << (8 * i);
        return value;
    }

    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t at_ = 0;
};

}  // namespace mqajit::fuzz

// A broken promise: print it and abort, so libFuzzer saves the input.
#define MQAJIT_FUZZ_EXPECT(cond)                                                               \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            std::fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);            \
            std::abort();                                                                       \
        }                                                                                       \
    } while (false)
