#pragma once

namespace mqajit {

inline constexpr const char* kVersion = "0.1.0";

}  // namespace mqajit
