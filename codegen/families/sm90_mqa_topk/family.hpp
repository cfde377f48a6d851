#pragma once
// The sm90_mqa_topk family (mqa_topk's fused kernel on sm_90a): each twgmma variant is the sm90
// prefill kernel of the same name after its op (wgmma), with the candidate epilogue.

#include "codegen/kernel_family.hpp"

namespace mqajit {

const MqaTopkFamily& sm90_mqa_topk_family();  // family.cpp
const FamilyRules& sm90_mqa_topk_rules();     // rules.cpp

// The same configuration under the other op: twgmma <-> wgmma.
Variant with_op(Variant variant, MatrixOp op);

}  // namespace mqajit
