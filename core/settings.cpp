#include "core/settings.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <vector>

#include <pwd.h>
#include <unistd.h>

#include "core/check.hpp"
#include "core/parse_number.hpp"

namespace mqajit {
namespace {

std::string lowercase(std::string_view text) {
    std::string result(text);
    std::ranges::transform(result, result.begin(), [](unsigned char c) { return std::tolower(c); });
    return result;
}

// NOTES: never a folder every user shares (the old /tmp fallback let any user plant kernels and
// links there): without HOME the passwd entry's home, else no cache folder at all.
std::filesystem::path default_cache_root(const Settings::EnvLookup& lookup,
                                         const std::function<std::optional<std::string>()>& home_of_user) {
    // XDG: a relative XDG_CACHE_HOME is invalid and is ignored.
    if (auto xdg = lookup("XDG_CACHE_HOME"); xdg && std::filesystem::path(*xdg).is_absolute()) return *xdg;
    if (auto home = lookup("HOME"); home && !home->empty()) return std::filesystem::path(*home) / ".cache";
    if (auto home = home_of_user(); home && std::filesystem::path(*home).is_absolute() && *home != "/")
        return std::filesystem::path(*home) / ".cache";
    return {};
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
    std::string problem;
    const auto result = parse_whole_int64(value, &problem);
    MQAJIT_CHECK(result.has_value(), "{}: {}; give digits only, like 256", name, problem);
    return *result;
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

std::optional<std::string> Settings::passwd_home() {
    std::vector<char> buffer(16384);
    struct passwd entry {};
    struct passwd* found = nullptr;
    while (getpwuid_r(geteuid(), &entry, buffer.data(), buffer.size(), &found) == ERANGE) buffer.resize(buffer.size() * 2);
    if (found == nullptr || found->pw_dir == nullptr) return std::nullopt;
    return std::string(found->pw_dir);
}

Settings Settings::from_environment(const EnvLookup& lookup,
                                    const std::function<std::optional<std::string>()>& home_of_user) {
    Settings s;
    auto get = [&](std::string_view name) -> std::optional<std::string> {
        auto value = lookup(name);
        if (value && value->empty()) return std::nullopt;
        return value;
    };
    if (auto v = get("MQAJIT_LOG_LEVEL")) s.log_level = parse_log_level("MQAJIT_LOG_LEVEL", *v);
    if (auto root = default_cache_root(lookup, home_of_user); !root.empty()) s.cache_dir = root / "mqajit";
    if (auto v = get("MQAJIT_CACHE_DIR")) s.cache_dir = *v;
    if (!s.cache_dir.empty()) s.user_db_path = s.cache_dir / "tuning.db";
    if (auto v = get("MQAJIT_TUNING_DB")) s.user_db_path = *v;
    if (auto v = get("MQAJIT_CACHE_GROUP")) s.cache_group = *v;
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
        // NOTES: secure_getenv: in a setuid or setgid process (AT_SECURE) every variable reads as
        // unset, so whoever runs such a program cannot pick the libraries it loads (docs/settings.md).
        const char* value = secure_getenv(std::string(name).c_str());
        if (value == nullptr) return std::nullopt;
        return std::string(value);
    });
}

const Settings& settings() {
    static const Settings instance = Settings::from_process_environment();
    return instance;
}

}  // namespace mqajit
