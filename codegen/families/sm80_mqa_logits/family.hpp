#pragma once
// The sm80_mqa_logits family (mma.sync with cp.async, sm_80 and newer): the family, its rules,
// its shared-memory size and the baseline variant, for the registry, tools and tests.

#include <cstddef>

#include "codegen/kernel_family.hpp"
#include "variants/variant.hpp"

namespace mqajit {

const MqaLogitsFamily& sm80_mqa_logits_family();  // family.cpp
const FamilyRules& sm80_mqa_logits_rules();        // rules.cpp

// Dynamic shared memory of one CTA of an mma `variant` at (heads, head_dim), in bytes: Q tile, KV
// stages, the result staging tile, weights and windows (sm80_mqa_logits.cuh's shared_layout()).
std::size_t sm80_shared_bytes(const Variant& variant, int heads, int head_dim);

// The pre-built NVIDIA baseline's variant for `heads` (an mma16x8x16 variant that every sm_80+ GPU
// runs): mma16x8x16_bkv64_r4_w4_lds2 for 32 heads, mma16x8x16_bkv64_r2_w4_lds2 for 64.
// Throws Error(unsupported) for other head counts.
Variant baseline_variant(int heads);

}  // namespace mqajit
