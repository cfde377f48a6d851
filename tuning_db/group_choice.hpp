#pragma once
// Which tuned group answers a lookup. The call's own group (arch, cu_num, heads, head_dim,
// clean_logits) when it has rows; otherwise, in this order:
//   1. the same group in the other clean_logits mode: same device, same kernels, which differ
//      only in whether they store -inf outside the windows;
//   2. when nearest_cu_num is on, the tuned cu_num of the same arch, heads and head_dim nearest
//      to the call's (a tie goes to the smaller), in the call's mode where that cu_num has it,
//      else in the other;
// and no group (the baseline kernel) when the arch, heads and head_dim have no rows at all, or
// only at other SM counts with nearest_cu_num off.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tuning_db/tuned_row.hpp"

namespace mqajit::tuning {

struct GroupChoice {
    std::optional<ShapeKey> group;       // lengths 0; nullopt: no group answers (the baseline kernel)
    std::vector<std::string> fallbacks;  // one sentence per way `group` differs from the call's own
    std::string declined;                // why a group that could have served did not (nearest_cu_num off)
};

// `tuned`: every group that has rows (any order), lengths ignored.
GroupChoice choose_group(const GroupKeyView& wanted, std::span<const ShapeKey> tuned, bool nearest_cu_num);

}  // namespace mqajit::tuning
