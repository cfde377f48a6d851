#pragma once
// The --arch option shared by codegen, aot and demo: the flag, else MQAJIT_ARCH, else an error.

#include <optional>
#include <string>

#include "core/check.hpp"
#include "core/settings.hpp"
#include "variants/arch.hpp"

namespace mqajit::cli {

inline Arch resolve_arch(const std::optional<std::string>& flag) {
    if (flag) return Arch::parse(*flag);
    if (settings().arch_override) return Arch::parse(*settings().arch_override);
    MQAJIT_FAIL(invalid_argument, "no arch given: pass --arch (e.g. sm_90a, gfx950) or set MQAJIT_ARCH");
}

}  // namespace mqajit::cli
