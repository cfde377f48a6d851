#pragma once
// The sm90_paged_mqa_logits family (decode: paged KV cache read by TMA, wgmma, sm_90a): the family,
// its rules and its resource math, for the registry, tools and tests.

#include <cstdint>

#include "codegen/kernel_family.hpp"

namespace mqajit {

const PagedMqaLogitsFamily& sm90_paged_mqa_logits_family();  // family.cpp
const FamilyRules& sm90_paged_mqa_logits_rules();            // rules.cpp

// Dynamic shared memory of one block (PagedConfig::kSharedBytes is the device-side twin): 1024 B of
// alignment slack, the key stages, two Q buffers, the scale stages, the mbarriers and the
// schedule's scan scratch.
std::int64_t paged_shared_bytes(const Variant& variant, int heads, int head_dim);

// Registers a math thread has (PagedConfig::kMathThreadRegisters), and what it needs: the
// accumulators, the weights and 24 for the rest.
int paged_math_thread_registers(const Variant& variant);
int paged_registers_needed(const Variant& variant);

// The pre-built baseline variant for (heads, next_n): two math warpgroups, eight stages, 64-token
// blocks (what ran on the H200 first, docs/PERFORMANCE.md).
Variant paged_baseline_variant(int heads, int next_n);

}  // namespace mqajit
