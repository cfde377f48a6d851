#include "runtime/kernel_cache.hpp"

#include <chrono>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/hash.hpp"
#include "core/log.hpp"

std::size_t std::hash<mqajit::KernelKey>::operator()(const mqajit::KernelKey& key) const noexcept {
    const std::hash<std::string> hash_string;
    std::size_t seed = hash_string(key.family);
    for (const std::string* part : {&key.variant, &key.arch, &key.options_fingerprint}) {
        seed ^= hash_string(*part) + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
    }
    return seed;
}

namespace mqajit {

std::size_t KernelCache::LoadedKeyHash::operator()(const LoadedKey& key) const noexcept {
    return std::hash<KernelKey>()(key.kernel) ^ (static_cast<std::size_t>(key.device_ordinal) * 0x9e3779b97f4a7c15ull);
}

KernelCache::KernelCache(std::optional<DiskCache> disk, std::size_t capacity)
    : disk_(std::move(disk)), memory_(capacity) {}

KernelCache::Built KernelCache::build(const Compiler& compiler, const KernelKey& key, const CompileRequest& request,
                                      Storing storing, bool allow_cache_hit) const {
    Built built;
    if (disk_) {
        built.disk_key = DiskCache::key_for(compiler, request);
        if (allow_cache_hit) {
            if (auto hit = disk_->load(built.disk_key)) {
                built.binary = std::move(hit->binary);
                built.usage = hit->meta.usage;
                built.log = std::move(hit->meta.log);
                built.from_cache = true;
                built.entry = std::move(hit->entry);
                return built;
            }
        }
    }

    const auto start = std::chrono::steady_clock::now();
    CompileResult result = compiler.compile(request);
    built.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    log().debug("compiled {} ({}, {}) with {} {} in {:.0f} ms: {} registers, {} bytes static shared, spills {}/{} bytes",
                key.variant, key.family, key.arch, compiler.name(), compiler.version(), built.compile_ms,
                result.usage.registers, result.usage.shared_bytes, result.usage.spill_store_bytes,
                result.usage.spill_load_bytes);
    built.binary = std::move(result.binary);
    built.usage = result.usage;
    built.log = std::move(result.log);
    if (!disk_) return built;

    DiskCacheMeta meta;
    meta.family = key.family;
    meta.variant = key.variant;
    meta.compiler = compiler.name();
    meta.compiler_version = compiler.version();
    meta.arch = request.arch;
    meta.options = effective_options(compiler, request);
    meta.kernel_name = request.kernel_name;
    meta.source_hash = DiskCache::source_hash(request);
    meta.usage = built.usage;
    meta.log = built.log;
    if (storing == Storing::required) {
        built.entry = disk_->publish(built.disk_key, built.binary, std::move(meta));
    } else {
        built.entry = disk_->store(built.disk_key, built.binary, std::move(meta));
    }
    return built;
}

std::shared_ptr<LoadedKernel> KernelCache::load(Device& device, const Compiler& compiler, const KernelKey& key,
                                                const CompileRequest& request) const {
    Built built = build(compiler, key, request, Storing::best_effort);
    if (!built.from_cache) return device.load(built.binary, request.kernel_name);
    try {
        return device.load(built.binary, request.kernel_name);
    } catch (const Error& e) {
        // NOTES: an intact cached binary the driver refuses (e.g. from a build with another
        // compiler under the same version string) is dropped and rebuilt once.
        disk_->discard(built.disk_key, fmt::format("the driver could not load it: {}", e.what()));
        built = build(compiler, key, request, Storing::best_effort, /*allow_cache_hit=*/false);
        return device.load(built.binary, request.kernel_name);
    }
}

std::shared_ptr<LoadedKernel> KernelCache::get(Device& device, const Compiler& compiler, const KernelKey& key,
                                               const std::function<CompileRequest()>& make_request) {
    return memory_.get_or_create(LoadedKey{device.ordinal(), key},
                                 [&] { return load(device, compiler, key, make_request()); });
}

std::shared_ptr<LoadedKernel> KernelCache::get_prebuilt(Device& device, const KernelKey& key,
                                                       std::span<const char> binary, const std::string& kernel_name) {
    return memory_.get_or_create(LoadedKey{device.ordinal(), key}, [&] { return device.load(binary, kernel_name); });
}

KernelCache::AotResult KernelCache::compile_ahead_of_time(const Compiler& compiler, const KernelKey& key,
                                                          const std::function<CompileRequest()>& make_request) {
    MQAJIT_CHECK_KIND(unsupported, disk_.has_value(),
                      "ahead-of-time compilation keeps kernels in the disk cache, which is disabled here; unset "
                      "MQAJIT_DISABLE_DISK_CACHE");
    const CompileRequest request = make_request();
    Built built = build(compiler, key, request, Storing::required);
    return AotResult{.entry = *built.entry,
                     .usage = built.usage,
                     .log = std::move(built.log),
                     .from_cache = built.from_cache,
                     .compile_ms = built.compile_ms};
}

}  // namespace mqajit
