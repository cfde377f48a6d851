#include "core/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include "core/settings.hpp"

namespace mqajit {
namespace {

spdlog::level::level_enum to_spdlog(LogLevel level) {
    switch (level) {
        case LogLevel::trace: return spdlog::level::trace;
        case LogLevel::debug: return spdlog::level::debug;
        case LogLevel::info: return spdlog::level::info;
        case LogLevel::warn: return spdlog::level::warn;
        case LogLevel::error: return spdlog::level::err;
        case LogLevel::off: return spdlog::level::off;
    }
    return spdlog::level::warn;
}

std::shared_ptr<spdlog::logger> make_logger() {
    auto logger = std::make_shared<spdlog::logger>("mqajit", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    logger->set_pattern("[mqajit %^%l%$] %v");
    try {
        logger->set_level(to_spdlog(settings().log_level));
    } catch (const std::exception& e) {
        logger->set_level(spdlog::level::warn);
        logger->warn("{}; logging at 'warn'", e.what());
    }
    return logger;
}

}  // namespace

spdlog::logger& log() {
    // NOTES: a function-local static, not spdlog's global registry, so an embedding program's own
    // spdlog setup is left alone.
    static const std::shared_ptr<spdlog::logger> logger = make_logger();
    return *logger;
}

}  // namespace mqajit
