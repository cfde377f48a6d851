#include "runtime/disk_cache_meta.hpp"

#include <ctime>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/check.hpp"

namespace mqajit {
namespace {

template <typename T>
T field(const nlohmann::json& json, const char* name) {
    const auto found = json.find(name);
    MQAJIT_CHECK_KIND(io, found != json.end(), "meta.json has no '{}' field", name);
    try {
        return found->get<T>();
    } catch (const nlohmann::json::exception&) {
        MQAJIT_FAIL(io, "meta.json's '{}' field has the wrong type ({})", name, found->type_name());
    }
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
            {"binary_hash", meta.binary_hash},
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
    meta.binary_hash = field<std::string>(json, "binary_hash");
    meta.created = field<std::string>(json, "created");
    const auto usage = field<nlohmann::json>(json, "usage");
    meta.usage.registers = field<int>(usage, "registers");
    meta.usage.shared_bytes = field<int>(usage, "shared_bytes");
    meta.usage.spill_store_bytes = field<int>(usage, "spill_store_bytes");
    meta.usage.spill_load_bytes = field<int>(usage, "spill_load_bytes");
    meta.usage.stack_bytes = field<int>(usage, "stack_bytes");
    // NOTES: the AMD fields came later; entries written before them read as "not reported".
    meta.usage.agprs = usage.value("agprs", -1);
    meta.usage.sgprs = usage.value("sgprs", -1);
    meta.usage.vgpr_spills = usage.value("vgpr_spills", -1);
    meta.usage.sgpr_spills = usage.value("sgpr_spills", -1);
    meta.usage.scratch_bytes = usage.value("scratch_bytes", -1);
    meta.usage.wgmma_serialized = usage.value("wgmma_serialized", false);
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
