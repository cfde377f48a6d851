#pragma once
// Every MQAJIT_* environment variable, read once into typed fields. No other file calls getenv.
// The table of variables lives in docs/settings.md.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace mqajit {

enum class LogLevel { trace, debug, info, warn, error, off };

struct Settings {
    LogLevel log_level = LogLevel::warn;
    // MQAJIT_CACHE_DIR, default <user cache>/mqajit; empty when this user has no home folder
    // (then kernels stay in memory and user rows too: never a folder every user shares).
    std::filesystem::path cache_dir;
    std::filesystem::path user_db_path;     // MQAJIT_TUNING_DB, default <cache_dir>/tuning.db
    std::optional<std::string> cache_group;  // MQAJIT_CACHE_GROUP: share the cache with this group
    std::optional<std::filesystem::path> system_db_path;  // MQAJIT_SYSTEM_DB, default: the installed one
    bool disable_jit = false;               // MQAJIT_DISABLE_JIT
    bool disable_disk_cache = false;        // MQAJIT_DISABLE_DISK_CACHE
    std::optional<std::string> arch_override;  // MQAJIT_ARCH
    std::optional<std::string> cuda_driver_library;  // MQAJIT_CUDA_DRIVER_LIBRARY
    std::optional<std::string> nvrtc_library;        // MQAJIT_NVRTC_LIBRARY
    std::int64_t memory_cache_capacity = 256;        // MQAJIT_MEMORY_CACHE_CAPACITY (kernels)
    bool nearest_cu_num = true;             // MQAJIT_NEAREST_CU_NUM: an untuned SM count uses the nearest tuned one

    using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;
    // `home_of_user`: this user's home from the passwd database, for when HOME is not set.
    // Parses strictly: a malformed value throws mqajit::Error naming the variable and what it accepts.
    static Settings from_environment(const EnvLookup& lookup,
                                     const std::function<std::optional<std::string>()>& home_of_user = passwd_home);
    static std::optional<std::string> passwd_home();
    static Settings from_process_environment();
};

// The process-wide settings, read on first use.
const Settings& settings();

// Strict parsers, exposed for tests and for CLI flags that take the same values.
bool parse_bool(std::string_view name, std::string_view value);
std::int64_t parse_int(std::string_view name, std::string_view value);
LogLevel parse_log_level(std::string_view name, std::string_view value);

}  // namespace mqajit
