#pragma once
// Checks paged_mqa_logits() arguments and turns them into the kernel argument, before anything
// launches. Only what the views say is checked: block indices and context lengths live in device
// memory and are the caller's duty (docs/paged_mqa_logits.md).

#include "codegen/kernel_family.hpp"
#include "codegen/templates/paged_mqa_logits_params.cuh"
#include "mqajit/tensor.hpp"

namespace mqajit {

struct PagedMqaLogitsArgs {
    PagedProblemShape shape;
    PagedMqaLogitsParams params{};
};

// q: float8_e4m3 [B, next_n, H, D]; kv_cache: uint8 [num_blocks, block_kv, 1, D + 4];
// weights: float32 [B * next_n, H]; context_lens: int32 [B] or [B, next_n];
// block_table: int32 [B, max_blocks]; logits: float32 [B * next_n, max_context_len].
// Throws Error(invalid_argument) saying what is wrong and what is allowed; Error(unsupported) for
// valid but unsupported sizes (next_n, heads, head_dim, block_kv).
PagedMqaLogitsArgs make_paged_mqa_logits_args(const TensorView& q, const TensorView& kv_cache, const TensorView& weights,
                                              const TensorView& context_lens, const TensorView& block_table,
                                              const TensorView& logits, bool clean_logits);

}  // namespace mqajit
