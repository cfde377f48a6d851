#pragma once
// Loaded kernels by KernelKey: a memory hit is one lookup (no source is generated); a miss generates
// the source, then takes the binary from the disk cache or compiles and stores it, then loads it.
// Its capacity is the one bound on loaded kernels: callers keep them only while they use them.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "runtime/compiler.hpp"
#include "runtime/device.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/memory_cache.hpp"

namespace mqajit {

// Names a generated kernel without generating it. options_fingerprint must change whenever anything
// else that shapes the binary does (compiler version, family options).
struct KernelKey {
    std::string family;               // "sm90_mqa_logits"
    std::string variant;              // "wgmma64x128x32_bkv128_r4_w2_lds3_h32_d128"
    std::string arch;                 // "sm_90a"
    std::string options_fingerprint;  // e.g. "nvrtc-13.0"
    bool operator==(const KernelKey&) const = default;
};

}  // namespace mqajit

template <>
struct std::hash<mqajit::KernelKey> {
    std::size_t operator()(const mqajit::KernelKey& key) const noexcept;
};

namespace mqajit {

class KernelCache {
public:
    // `disk`: nullopt keeps kernels in memory only (MQAJIT_DISABLE_DISK_CACHE). `capacity`: loaded
    // kernels kept per process (MQAJIT_MEMORY_CACHE_CAPACITY).
    KernelCache(std::optional<DiskCache> disk, std::size_t capacity);

    // The kernel loaded on `device`. On a miss `make_request` runs once, however many threads ask.
    // Throws mqajit::Error (compile_failed, driver, ...) when it cannot be built or loaded.
    std::shared_ptr<LoadedKernel> get(Device& device, const Compiler& compiler, const KernelKey& key,
                                      const std::function<CompileRequest()>& make_request);

    // A pre-built kernel (the baseline, the reference) loaded on `device`, held under `key` with the
    // generated ones, so that one capacity bounds every kernel the process keeps loaded.
    std::shared_ptr<LoadedKernel> get_prebuilt(Device& device, const KernelKey& key, std::span<const char> binary,
                                               const std::string& kernel_name);

    struct AotResult {
        std::filesystem::path entry;  // <root>/<key>
        ResourceUsage usage;
        std::string log;
        bool from_cache = false;
        double compile_ms = 0.0;      // 0 for a cache hit
    };
    // Compiles (or finds) the kernel and keeps it in the disk cache; needs no GPU. Throws
    // Error(unsupported) without a disk cache and Error(io) when the entry cannot be written.
    AotResult compile_ahead_of_time(const Compiler& compiler, const KernelKey& key,
                                    const std::function<CompileRequest()>& make_request);

    const std::optional<DiskCache>& disk() const { return disk_; }
    std::size_t loaded_count() const { return memory_.size(); }

private:
    struct LoadedKey {
        int device_ordinal;
        KernelKey kernel;
        bool operator==(const LoadedKey&) const = default;
    };
    struct LoadedKeyHash {
        std::size_t operator()(const LoadedKey& key) const noexcept;
    };
    struct Built {
        std::vector<char> binary;
        ResourceUsage usage;
        std::string log;
        bool from_cache = false;
        double compile_ms = 0.0;
        std::string disk_key;                       // empty without a disk cache
        std::optional<std::filesystem::path> entry;
    };
    enum class Storing { best_effort, required };

    Built build(const Compiler& compiler, const KernelKey& key, const CompileRequest& request, Storing storing,
                bool allow_cache_hit = true) const;
    std::shared_ptr<LoadedKernel> load(Device& device, const Compiler& compiler, const KernelKey& key,
                                       const CompileRequest& request) const;

    std::optional<DiskCache> disk_;
    SingleFlightCache<LoadedKey, LoadedKernel, LoadedKeyHash> memory_;
};

}  // namespace mqajit
