#pragma once
// The gfx9_paged_mqa_logits family (decode: paged KV cache, fp8 MFMA on AMD gfx942 and gfx950): the
// family, its rules and its resource math, for the registry, tools and tests.

#include <cstdint>

#include "codegen/kernel_family.hpp"
#include "variants/arch.hpp"

namespace mqajit {

const PagedMqaLogitsFamily& gfx9_paged_mqa_logits_family();  // family.cpp
const FamilyRules& gfx9_paged_mqa_logits_rules();            // rules.cpp

// LDS of one workgroup (gfx9_paged_mqa_logits.cuh's paged_lds_bytes()): the request's Q, then S
// buffers of one cache block's keys and scales.
std::int64_t pmfma_lds_bytes(const Variant& variant, int heads, int head_dim);

// VGPRs a lane needs, estimated from what the template keeps in registers: the held token's Q
// operands, the accumulators and head weights, one cache block's staged chunks, and 36 for the rest.
int pmfma_vgpr_estimate(const Variant& variant, int heads, int head_dim);

// Splits of each request's cache blocks (the grid's y): enough that batch x splits reaches twice the
// CU count where a request of max_context_len keys has the blocks for it (codegen/grid_plan.hpp).
int pmfma_splits(int batch, int max_context_len, int block_kv, int compute_units);

}  // namespace mqajit
