#pragma once
// Checks mqa_logits() arguments and turns them into the kernel argument, before anything launches.

#include "codegen/kernel_family.hpp"
#include "codegen/templates/mqa_logits_params.cuh"
#include "mqajit/tensor.hpp"

namespace mqajit {

struct MqaLogitsArgs {
    ProblemShape shape;
    MqaLogitsParams params{};
};

// Throws Error(invalid_argument) saying what is wrong and what is allowed; Error(unsupported) for
// valid but unsupported heads/head_dim. bf16 logits and compressed rows (max_seqlen_k > 0, see
// MqaLogitsOptions::max_seqlen_k) set MqaLogitsParams::logits_bf16 and compressed_columns.
MqaLogitsArgs make_mqa_logits_args(const TensorView& q, const TensorView& kv, const TensorView& kv_scales,
                                   const TensorView& weights, const TensorView& cu_starts, const TensorView& cu_ends,
                                   const TensorView& logits, bool clean_logits, int max_seqlen_k = 0);

// Throws Error(invalid_argument) when the bytes logits spans meet an input's (check_no_overlap).
// Not part of make_mqa_logits_args: mqa_topk checks its operands with a logits view of the whole
// [S, N] that no kernel writes, which may reach past its workspace into other tensors.
void check_logits_apart(const TensorView& q, const TensorView& kv, const TensorView& kv_scales,
                        const TensorView& weights, const TensorView& cu_starts, const TensorView& cu_ends,
                        const TensorView& logits);

}  // namespace mqajit
