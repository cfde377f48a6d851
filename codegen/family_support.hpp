#pragma once
// Pieces every kernel family shares: the extern "C" name of a generated kernel, the generated
// translation unit around it, the rules check before generating, and the resource and alignment
// checks of a launch plan.

#include <cstddef>
#include <string>
#include <string_view>

#include "codegen/kernel_family.hpp"
#include "codegen/templates/mqa_logits_params.cuh"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace mqajit {

// "mqa_logits_<variant>_h<heads>_d<head_dim>": the name of the one kernel a generated source defines.
std::string generated_kernel_name(const Variant& variant, int heads, int head_dim);

// Throws Error(unsupported) with the family's rules' reason unless `variant` can run on `arch` at
// (heads, head_dim): what a generator checks before it writes anything.
void check_generatable(const KernelFamily& family, const Variant& variant, int heads, int head_dim, const Arch& arch);

// The source a family generates: a comment naming the variant, shape and arch, the family's
// `header` from the embedded templates, and one line `macro(<kernel name>, <macro_arguments>)`;
// its headers are `header` and the templates it includes.
GeneratedKernel generated_unit(const Variant& variant, int heads, int head_dim, const Arch& arch,
                               std::string_view header, std::string_view macro, std::string_view macro_arguments);

// Whether a paged_mqa_logits variant computes the call's shape: r = next_n and bkv = block_kv (one
// cache block per pipeline step), what PagedMqaLogitsFamily::fits() checks for the decode families.
Support fits_paged_call(const Variant& variant, const PagedProblemShape& shape);

// Throws Error(unsupported) when a block of `variant` needs more shared memory (`memory`: "shared
// memory" or "LDS") than the device allows per block; `remedy` ends the message ("lower lds or bkv").
void check_shared_bytes(const Variant& variant, std::size_t bytes, const DeviceLimits& limits,
                        std::string_view memory, std::string_view remedy);

// Throws Error(invalid_argument) unless q and kv start on 16-byte boundaries with row strides that
// are multiples of 16 bytes; `kernels` names the family in the message ("mma", "mfma").
void check_row_alignment(const MqaLogitsParams& params, std::string_view kernels);

}  // namespace mqajit
