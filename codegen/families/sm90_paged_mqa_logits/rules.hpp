#pragma once
// Whether a paged_mqa_logits (decode) variant can run: the rules of the sm_90a paged wgmma family,
//   pwgmma64x<N>x32_bkv<B>_r<next_n>_w<W>_lds<S>
// whose kernel is codegen/templates/sm90_paged_mqa_logits.cuh (PagedConfig). N = next_n x heads,
// B = the cache's block_kv (keys per pipeline stage), W = math warpgroups, S = pipeline stages.
// NOTES: functions apart from the variant registry, because the decode family is not registered
// yet (no KernelOp, generator or plan); pwgmma_check becomes its FamilyRules::check when it is.

#include <cstdint>

#include "codegen/family_rules.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace mqajit {

// The call shape a paged variant must fit (the paged table's key columns besides arch and cu_num).
struct PagedProblem {
    int heads = 0;
    int head_dim = 0;
    int next_n = 0;
    int block_kv = 0;
};

// ok, or the first rule that fails with what would work: pwgmma_check's, then whether the variant
// fits the call (r = next_n, bkv = block_kv).
Support paged_variant_support(const Arch& arch, const PagedProblem& problem, const Variant& variant);

// Every rule the variant decides at (heads, head_dim) alone: arch, op, heads and head_dim,
// instruction shape, r (next_n) 1..4, bkv, warpgroups, stages, accumulators, registers, shared
// memory. The signature of a family's FamilyRules::check, which this becomes when the decode
// family is registered.
Support pwgmma_check(const Arch& arch, int heads, int head_dim, const Variant& variant);

// Dynamic shared memory of one block: 1024 B of alignment slack, the key stages, two Q buffers,
// the key scales per stage, the mbarriers and the schedule scratch (PagedConfig::kSharedBytes).
std::int64_t pwgmma_shared_bytes(const Variant& variant, int head_dim);

}  // namespace mqajit
