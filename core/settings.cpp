#include "core/settings.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

#include "core/check.hpp"

namespace mqajit {
namespace {

std::string lowercase(std::string_view text) {
    std::string result(text);
    std::ranges::transform(result, result.begin(), [](unsigned char c) { return std::tolower(c); });
    return result;
}

std::filesystem::path default_cache_root(const Settings::EnvLookup& lookup) {
    if (auto xdg = lookup("XDG_CACHE_HOME"); xdg && !xdg->empty()) return *xdg;
    if (auto home = lookup("HOME"); home && !home->empty()) return std::filesystem::path(*home) / ".cache";
    return std::filesystem::temp_directory_path();
}

}  // namespace

bool parse_bool(std::string_view name, std::string_view value) {
    const std::string v = lowercase(value);
    if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
    if (v == "0" || v == "false" || v == "no" || v == "off") return false;
    MQAJIT_FAIL(invalid_argument, "{}='{}' is not a boolean; use one of 1/0, true/false, yes/no, on/off",
                name, value);
}

std::int64_t parse_int(std::string_view name, std::string_view value) {
    std::int64_t result = 0;
    const char* end = value.data() + value.size();
    auto [ptr, ec] = std::from_chars(value.data(), end, result);
    MQAJIT_CHECK(!value.empty() && ec == std::errc() && ptr == end,
                 "{}='{}' is not a whole number; give digits only, like 256", name, value);
    return result;
}

LogLevel parse_log_level(std::string_view name, std::string_view value) {
    const std::string v = lowercase(value);
    if (v == "trace") return LogLevel::trace;
    if (v == "debug") return LogLevel::debug;
    if (v == "info") return LogLevel::info;
    if (v == "warn" || v == "warning") return LogLevel::warn;
    if (v == "error") return LogLevel::error;
    if (v == "off") return LogLevel::off;
    MQAJIT_FAIL(invalid_argument, "{}='{}' is not a log level; use trace, debug, info, warn, error or off",
                name, value);
}

Settings Settings::from_environment(const EnvLookup& lookup) {
    Settings s;
    auto get = [&](std::string_view name) -> std::optional<std::string> {
        auto value = lookup(name);
        if (value && value->empty()) return std::nullopt;
        return value;
    };
    if (auto v = get("MQAJIT_LOG_LEVEL")) s.log_level = parse_log_level("MQAJIT_LOG_LEVEL", *v);
    s.cache_dir = default_cache_root(lookup) / "mqajit";
    if (auto v = get("MQAJIT_CACHE_DIR")) s.cache_dir = *v;
    s.user_db_path = s.cache_dir / "tuning.db";
    if (auto v = get("MQAJIT_TUNING_DB")) s.user_db_path = *v;
    if (auto v = get("MQAJIT_SYSTEM_DB")) s.system_db_path = std::filesystem::path(*v);
    if (auto v = get("MQAJIT_DISABLE_JIT")) s.disable_jit = parse_bool("MQAJIT_DISABLE_JIT", *v);
    if (auto v = get("MQAJIT_DISABLE_DISK_CACHE"))
        s.disable_disk_cache = parse_bool("MQAJIT_DISABLE_DISK_CACHE", *v);
    if (auto v = get("MQAJIT_ARCH")) s.arch_override = *v;
    if (auto v = get("MQAJIT_CUDA_DRIVER_LIBRARY")) s.cuda_driver_library = *v;
    if (auto v = get("MQAJIT_NVRTC_LIBRARY")) s.nvrtc_library = *v;
    if (auto v = get("MQAJIT_NEAREST_CU_NUM")) s.nearest_cu_num = parse_bool("MQAJIT_NEAREST_CU_NUM", *v);
    if (auto v = get("MQAJIT_MEMORY_CACHE_CAPACITY")) {
        s.memory_cache_capacity = parse_int("MQAJIT_MEMORY_CACHE_CAPACITY", *v);
        MQAJIT_CHECK(s.memory_cache_capacity >= 1, "MQAJIT_MEMORY_CACHE_CAPACITY={} must be at least 1",
                     s.memory_cache_capacity);
    }
    return s;
}

Settings Settings::from_process_environment() {
    return from_environment([](std::string_view name) -> std::optional<std::string> {
        const char* value = std::getenv(std::string(name).c_str());
        if (value == nullptr) return std::nullopt;
        return std::string(value);
    });
}

const Settings& settings() {
    static const Settings instance = Settings::from_process_environment();
    return instance;
}

}  // namespace mqajit
