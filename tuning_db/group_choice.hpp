#pragma once
// Which tuned group answers a lookup. The call's own group (its key without the lengths) when it
// has rows; otherwise, in this order:
//   1. (tables with a mode column) the same group in the other clean_logits mode: same device,
//      same kernels, which differ only in whether they store -inf outside the windows;
//   2. (prefill) the same two with float32 logits for a bfloat16 call (or the other way round):
//      the same kernels, timed with the other store;
//   3. when nearest_cu_num is on, the tuned cu_num of the same identity columns (arch, heads,
//      head_dim, ...) nearest to the call's (a tie goes to the smaller), in the first of the
//      stand-ins above that it has;
// and no group (the baseline kernel) when the identity columns have no rows at all, or only at
// other SM counts with nearest_cu_num off. The same rule serves every table.

#include <optional>
#include <string>
#include <vector>

#include "tuning_db/shape_keys.hpp"

namespace mqajit::tuning {

template <class Key>
struct GroupChoice {
    std::optional<Key> group;            // lengths 0; nullopt: no group answers (the baseline kernel)
    std::vector<std::string> fallbacks;  // one sentence per way `group` differs from the call's own
    std::string declined;                // why a group that could have served did not (nearest_cu_num off)
};

// `tuned`: every group that has rows (any order), lengths ignored.
template <class Key>
GroupChoice<Key> choose_group(const Key& wanted, const std::vector<Key>& tuned, bool nearest_cu_num);

extern template GroupChoice<ShapeKey> choose_group(const ShapeKey&, const std::vector<ShapeKey>&, bool);
extern template GroupChoice<PagedShapeKey> choose_group(const PagedShapeKey&, const std::vector<PagedShapeKey>&, bool);
extern template GroupChoice<TopkShapeKey> choose_group(const TopkShapeKey&, const std::vector<TopkShapeKey>&, bool);

}  // namespace mqajit::tuning
