#pragma once
// meta.json of a kernel cache entry: what built the binary, and its size and SHA-256 to check it
// by. The entry's meta.hmac seals this file (runtime/disk_cache_seal.hpp).

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "runtime/compiler.hpp"

namespace mqajit {

struct DiskCacheMeta {
    // Bump when fields change meaning; other formats read as misses. 2: sealed, SHA-256 of the binary.
    static constexpr int kFormat = 2;

    std::string key;               // the entry's folder name
    std::string family;            // e.g. "sm90_mqa_logits"
    std::string variant;           // e.g. "wgmma64x128x32_bkv128_r4_w2_lds3_h32_d128"
    std::string compiler;          // "nvrtc"
    std::string compiler_version;  // "13.0"
    std::string arch;              // "sm_90a"
    std::vector<std::string> options;
    std::string kernel_name;
    std::string source_hash;
    std::uint64_t binary_bytes = 0;
    std::string binary_sha256;     // hex
    std::string created;           // UTC, "2025-01-31T12:00:00Z"
    ResourceUsage usage;
    std::string log;               // the compiler's log, so a cache hit can still show it
};

nlohmann::json to_json(const DiskCacheMeta& meta);
// Throws mqajit::Error(io) naming the missing or mistyped field, or a number its field cannot hold.
DiskCacheMeta meta_from_json(const nlohmann::json& json);

// The current time as "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_timestamp();

}  // namespace mqajit
