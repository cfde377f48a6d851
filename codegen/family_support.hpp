#pragma once
// Pieces every kernel family shares: the extern "C" name of a generated kernel, the generated
// translation unit around it, and the row alignment that 16-byte loads (cp.async, LDS fills, TMA) need.

#include <string>
#include <string_view>

#include "codegen/kernel_family.hpp"
#include "codegen/templates/mqa_logits_params.cuh"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace mqajit {

// "mqa_logits_<variant>_h<heads>_d<head_dim>": the name of the one kernel a generated source defines.
std::string generated_kernel_name(const Variant& variant, int heads, int head_dim);

// The source a family generates: a comment naming the variant, shape and arch, the family's
// `header` from the embedded templates, and one line `macro(<kernel name>, <macro_arguments>)`.
GeneratedKernel generated_unit(const Variant& variant, int heads, int head_dim, const Arch& arch,
                               std::string_view header, std::string_view macro, std::string_view macro_arguments);

// Throws Error(invalid_argument) unless q and kv start on 16-byte boundaries with row strides that
// are multiples of 16 bytes; `kernels` names the family in the message ("mma", "mfma").
void check_row_alignment(const MqaLogitsParams& params, std::string_view kernels);

}  // namespace mqajit
