#pragma once
// The gfx9_mqa_logits family (fp8 MFMA on AMD gfx942 and gfx950): the family, its rules and its
// LDS limits, for the registry, tools and tests.

#include <cstddef>
#include <span>
#include <string>

#include "codegen/kernel_family.hpp"
#include "variants/arch.hpp"

namespace mqajit {

const MqaLogitsFamily& gfx9_mqa_logits_family();  // family.cpp
const FamilyRules& gfx9_mqa_logits_rules();        // rules.cpp

// LDS of one workgroup of `variant` at (heads, head_dim): gfx9_mqa_logits.cuh's gfx9_lds_bytes().
std::size_t gfx9_lds_bytes(const Variant& variant, int heads, int head_dim);

// LDS one workgroup may use on `arch`: 160 KiB on gfx950, 64 KiB on gfx942 (and other AMD archs).
std::size_t gfx9_max_lds_bytes(const Arch& arch);

// The fp8 MFMA shapes (M x N x K) of `arch`: 32x32x64 and 16x16x128 on gfx950, 32x32x16 and 16x16x32
// on gfx942; empty on any other arch. The prefill (mfma) and decode (pmfma) families run these.
struct MfmaShape {
    int m, n, k;
};
std::span<const MfmaShape> gfx9_mfma_shapes(const Arch& arch);
// "<op>32x32x64 or <op>16x16x128": the shapes of `arch` as a reason lists them.
std::string gfx9_mfma_shape_list(const Arch& arch, std::string_view op);

}  // namespace mqajit
