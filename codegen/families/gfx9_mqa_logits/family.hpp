#pragma once
// Host-side limits of the mfma family (codegen/gfx9_family.cpp), for tools and tests.

#include <cstddef>

#include "variants/arch.hpp"

namespace mqajit {

// LDS one workgroup may use on `arch`: 160 KiB on gfx950, 64 KiB on gfx942 (and other AMD archs).
std::size_t gfx9_max_lds_bytes(const Arch& arch);

}  // namespace mqajit
