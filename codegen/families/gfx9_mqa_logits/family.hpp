#pragma once
// The gfx9_mqa_logits family (fp8 MFMA on AMD gfx942 and gfx950): the family, its rules and its
// LDS limits, for the registry, tools and tests.

#include <cstddef>

#include "codegen/kernel_family.hpp"
#include "variants/arch.hpp"

namespace mqajit {

const MqaLogitsFamily& gfx9_mqa_logits_family();  // family.cpp
const FamilyRules& gfx9_mqa_logits_rules();        // rules.cpp

// LDS of one workgroup of `variant` at (heads, head_dim): gfx9_mqa_logits.cuh's gfx9_lds_bytes().
std::size_t gfx9_lds_bytes(const Variant& variant, int heads, int head_dim);

// LDS one workgroup may use on `arch`: 160 KiB on gfx950, 64 KiB on gfx942 (and other AMD archs).
std::size_t gfx9_max_lds_bytes(const Arch& arch);

}  // namespace mqajit
