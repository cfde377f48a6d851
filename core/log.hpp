#pragma once
// The library's spdlog logger ("mqajit"), its level taken from MQAJIT_LOG_LEVEL, writing to stderr.

#include <spdlog/spdlog.h>

namespace mqajit {

spdlog::logger& log();

}  // namespace mqajit
