#pragma once
// The kernel families this build has: family_registry.cpp is the one list that names them.

#include <vector>

#include "codegen/kernel_family.hpp"
#include "variants/variant.hpp"

namespace mqajit {

// The families of `op`, in the order `mqajit variants` lists their variants.
std::vector<const KernelFamily*> families_of(KernelOp op);
// Every family of every operator.
std::vector<const KernelFamily*> all_families();

// The mqa_logits family that generates `variant` (by its matrix op); throws Error(unsupported) if none.
const MqaLogitsFamily& family_for(const Variant& variant);
// The paged_mqa_logits family that generates `variant`; throws Error(unsupported) if none.
const PagedMqaLogitsFamily& paged_family_for(const Variant& variant);
// The mqa_topk family that generates `variant`; throws Error(unsupported) if none.
const MqaTopkFamily& topk_family_for(const Variant& variant);
// The mqa_topk family whose kernels compute the values of mqa_logits variant `logits_variant`; null if none.
const MqaTopkFamily* topk_family_twinning(const Variant& logits_variant);
// The family of any operator that generates `variant` (matrix ops are unique across operators).
const KernelFamily& kernel_family_for(const Variant& variant);

}  // namespace mqajit
