#pragma once
// The sm90_mqa_topk family (mqa_topk's fused kernel on sm_90a): each twgmma variant is the sm90
// prefill kernel of the same name after its op (wgmma), with the candidate epilogue.

#include <cstdint>

#include "codegen/kernel_family.hpp"

namespace mqajit {

const MqaTopkFamily& sm90_mqa_topk_family();  // family.cpp
const FamilyRules& sm90_mqa_topk_rules();     // rules.cpp

// The same configuration under the other op: twgmma <-> wgmma.
Variant with_op(Variant variant, MatrixOp op);

// Shared memory the candidate epilogue stages in, past its twin's layout (sm90_topk_epilogue.cuh's
// OwnedResults::kSharedBytes): per math warp and query row, kStageTiles tiles' worth of (key, value)
// entries and a count.
inline constexpr int kSm90TopkStageTiles = 8;  // MQA_TOPK_STAGE_TILES
std::int64_t sm90_topk_stage_bytes(const Variant& variant);
// A twgmma variant's whole dynamic shared memory: its wgmma twin's and the stage.
std::int64_t sm90_topk_shared_bytes(const Variant& variant, int heads, int head_dim);

}  // namespace mqajit
