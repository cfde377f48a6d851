#include "runtime/disk_cache_meta.hpp"

#include <ctime>
#include <limits>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/check.hpp"

namespace mqajit {
namespace {

template <typename T>
T field(const nlohmann::json& json, const char* name) {
    const auto found = json.find(name);
    MQAJIT_CHECK_KIND(io, found != json.end(), "meta.json has no '{}' field", name);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        // NOTES: get<int>() would wrap a number that does not fit; it must fit exactly.
        MQAJIT_CHECK_KIND(io, found->is_number_integer(), "meta.json's '{}' field is not a whole number ({})", name,
                          found->type_name());
        const bool fits = found->is_number_unsigned()
                              ? found->get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())
                              : std::in_range<T>(found->get<std::int64_t>());
        MQAJIT_CHECK_KIND(io, fits, "meta.json's '{}' field {} is out of range", name, found->dump());
        return found->is_number_unsigned() ? static_cast<T>(found->get<std::uint64_t>())
                                           : static_cast<T>(found->get<std::int64_t>());
    } else {
        try {
            return found->get<T>();
        } catch (const nlohmann::json::exception&) {
            MQAJIT_FAIL(io, "meta.json's '{}' field has the wrong type ({})", name, found->type_name());
        }
    }
}

// An optional whole-number field (the AMD usage fields came later): `fallback` when absent.
int optional_int(const nlohmann::json& json, const char* name, int fallback) {
    return json.contains(name) ? field<int>(json, name) : fallback;
}

}  // namespace

nlohmann::json to_json(const DiskCacheMeta& meta) {
    return {{"format", DiskCacheMeta::kFormat},
            {"key", meta.key},
            {"family", meta.family},
            {"variant", meta.variant},
            {"compiler", meta.compiler},
            {"compiler_version", meta.compiler_version},
            {"arch", meta.arch},
            {"options", meta.options},
            {"kernel_name", meta.kernel_name},
            {"source_hash", meta.source_hash},
            {"binary_bytes", meta.binary_bytes},
            {"binary_sha256", meta.binary_sha256},
            {"created", meta.created},
            {"usage",
             {{"registers", meta.usage.registers},
              {"shared_bytes", meta.usage.shared_bytes},
              {"spill_store_bytes", meta.usage.spill_store_bytes},
              {"spill_load_bytes", meta.usage.spill_load_bytes},
              {"stack_bytes", meta.usage.stack_bytes},
              {"agprs", meta.usage.agprs},
              {"sgprs", meta.usage.sgprs},
              {"vgpr_spills", meta.usage.vgpr_spills},
              {"sgpr_spills", meta.usage.sgpr_spills},
              {"scratch_bytes", meta.usage.scratch_bytes},
              {"wgmma_serialized", meta.usage.wgmma_serialized}}},
            {"log", meta.log}};
}

DiskCacheMeta meta_from_json(const nlohmann::json& json) {
    MQAJIT_CHECK_KIND(io, json.is_object(), "meta.json is not a JSON object");
    const int format = field<int>(json, "format");
    MQAJIT_CHECK_KIND(io, format == DiskCacheMeta::kFormat, "meta.json has format {}; this build reads format {}",
                      format, DiskCacheMeta::kFormat);
    DiskCacheMeta meta;
    meta.key = field<std::string>(json, "key");
    meta.family = field<std::string>(json, "family");
    meta.variant = field<std::string>(json, "variant");
    meta.compiler = field<std::string>(json, "compiler");
    meta.compiler_version = field<std::string>(json, "compiler_version");
    meta.arch = field<std::string>(json, "arch");
    meta.options = field<std::vector<std::string>>(json, "options");
    meta.kernel_name = field<std::string>(json, "kernel_name");
    meta.source_hash = field<std::string>(json, "source_hash");
    meta.binary_bytes = field<std::uint64_t>(json, "binary_bytes");
    meta.binary_sha256 = field<std::string>(json, "binary_sha256");
    meta.created = field<std::string>(json, "created");
    const auto usage = field<nlohmann::json>(json, "usage");
    MQAJIT_CHECK_KIND(io, usage.is_object(), "meta.json's 'usage' field is not an object");
    meta.usage.registers = field<int>(usage, "registers");
    meta.usage.shared_bytes = field<int>(usage, "shared_bytes");
    meta.usage.spill_store_bytes = field<int>(usage, "spill_store_bytes");
    meta.usage.spill_load_bytes = field<int>(usage, "spill_load_bytes");
    meta.usage.stack_bytes = field<int>(usage, "stack_bytes");
    // NOTES: the AMD fields came later; entries written before them read as "not reported".
    meta.usage.agprs = optional_int(usage, "agprs", -1);
    meta.usage.sgprs = optional_int(usage, "sgprs", -1);
    meta.usage.vgpr_spills = optional_int(usage, "vgpr_spills", -1);
    meta.usage.sgpr_spills = optional_int(usage, "sgpr_spills", -1);
    meta.usage.scratch_bytes = optional_int(usage, "scratch_bytes", -1);
    meta.usage.wgmma_serialized = usage.contains("wgmma_serialized") && field<bool>(usage, "wgmma_serialized");
    meta.log = field<std::string>(json, "log");
    return meta;
}

std::string utc_timestamp() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                       utc.tm_hour, utc.tm_min, utc.tm_sec);
}

}  // namespace mqajit
