#pragma once
// The sm90_mqa_logits family (wgmma fed by TMA, sm_90a): the family, its rules and its KV split
// rules, for the registry, tools and tests.

#include <cstdint>

#include "codegen/kernel_family.hpp"

namespace mqajit {

const MqaLogitsFamily& sm90_mqa_logits_family();  // family.cpp
const FamilyRules& sm90_mqa_logits_rules();        // rules.cpp

// The split count nearest `wanted` (clamped to [1, tiles]) that leaves no split without tiles.
std::int64_t whole_kv_splits(std::int64_t num_kv_tiles, std::int64_t wanted);

// KV splits per q-block for the persistent grid of `num_multiprocessors` blocks: the count that
// minimizes the modelled time (rounds of units x (tiles per unit + a unit's start-up)) under full
// windows; ties go to fewer splits.
int sm90_kv_splits(std::int64_t num_q_blocks, std::int64_t num_kv_tiles, int num_multiprocessors);

}  // namespace mqajit
