#pragma once
// Whether a paged_mqa_logits (decode) variant fits a call: the rules of the decode family that
// generates it (FamilyRules::check at heads and head_dim) and then the call's next_n and block_kv.
// For dispatch and the decode tuning table's checks, which know the call's shape but no kernel.

#include "codegen/family_rules.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace mqajit {

// The call shape a paged variant must fit (the decode table's key columns besides arch and cu_num).
struct PagedProblem {
    int heads = 0;
    int head_dim = 0;
    int next_n = 0;
    int block_kv = 0;
};

// ok, or the first rule that fails with what would work: a decode family for the variant's op
// (pwgmma, pmfma), its rules on `arch`, then whether the variant fits the call (r = next_n,
// bkv = block_kv).
Support paged_variant_support(const Arch& arch, const PagedProblem& problem, const Variant& variant);

}  // namespace mqajit
