#pragma once
// Pieces every kernel family shares: the extern "C" name of a generated kernel, and the row
// alignment that 16-byte loads (cp.async, LDS fills, TMA) need.

#include <string>
#include <string_view>

#include "codegen/templates/mqa_logits_params.cuh"
#include "variants/variant.hpp"

namespace mqajit {

// "mqa_logits_<variant>_h<heads>_d<head_dim>": the name of the one kernel a generated source defines.
std::string generated_kernel_name(const Variant& variant, int heads, int head_dim);

// Throws Error(invalid_argument) unless q and kv start on 16-byte boundaries with row strides that
// are multiples of 16 bytes; `kernels` names the family in the message ("mma", "mfma").
void check_row_alignment(const MqaLogitsParams& params, std::string_view kernels);

}  // namespace mqajit
