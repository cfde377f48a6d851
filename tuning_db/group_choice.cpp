#include "tuning_db/group_choice.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mqajit::tuning {
namespace {

template <class Key>
bool has(const std::vector<Key>& tuned, const Key& key) {
    return std::ranges::any_of(tuned, [&](const Key& g) { return same_group(g, key); });
}

template <class Key>
Key in_mode(Key key, int clean_logits) {
    key.clean_logits = clean_logits;
    return key;
}

template <class Key>
std::string other_mode_note(const Key& wanted, int served_mode) {
    return fmt::format("no rows tuned with clean_logits={}: the clean_logits={} rows serve (the same kernels, "
                       "timed in the other mode; `{} --clean-logits {}` tunes this one)",
                       wanted.clean_logits, served_mode, Key::kOp.tune_command, wanted.clean_logits);
}

}  // namespace

template <class Key>
GroupChoice<Key> choose_group(const Key& wanted_key, const std::vector<Key>& tuned, bool nearest_cu_num) {
    GroupChoice<Key> choice;
    const Key wanted = group_of(wanted_key);
    const int other_mode = wanted.clean_logits ? 0 : 1;
    if (has(tuned, wanted)) {
        choice.group = wanted;
        return choice;
    }
    if (has(tuned, in_mode(wanted, other_mode))) {
        choice.group = in_mode(wanted, other_mode);
        choice.fallbacks.push_back(other_mode_note(wanted, other_mode));
        return choice;
    }
    std::set<int> cu_nums;  // tuned SM counts of the same identity columns, ascending
    for (const Key& g : tuned) {
        if (same_identity(g, wanted)) cu_nums.insert(g.cu_num);
    }
    if (cu_nums.empty()) return choice;
    const std::string identity = identity_string(wanted);
    if (!nearest_cu_num) {
        choice.declined = fmt::format("{} is tuned only at cu_num {}, not {}; the nearest SM count is not used "
                                      "(MQAJIT_NEAREST_CU_NUM is off)",
                                      identity, fmt::join(cu_nums, ", "), wanted.cu_num);
        return choice;
    }
    // NOTES: std::set is ascending and min_element keeps the first of equals: a tie goes to the smaller.
    // The distance in 64 bits: two ints' difference need not fit an int.
    const int nearest = *std::ranges::min_element(
        cu_nums, {}, [&](int cu) { return std::abs(std::int64_t{cu} - std::int64_t{wanted.cu_num}); });
    Key served = wanted;
    served.cu_num = nearest;
    choice.fallbacks.push_back(fmt::format("{} is not tuned at cu_num {}: the nearest tuned cu_num, {}, serves "
                                           "(tuned: {}; MQAJIT_NEAREST_CU_NUM=0 turns this off)",
                                           identity, wanted.cu_num, nearest, fmt::join(cu_nums, ", ")));
    if (!has(tuned, served)) {
        served.clean_logits = other_mode;
        choice.fallbacks.push_back(other_mode_note(wanted, other_mode));
    }
    choice.group = served;
    return choice;
}

template GroupChoice<ShapeKey> choose_group(const ShapeKey&, const std::vector<ShapeKey>&, bool);
template GroupChoice<PagedShapeKey> choose_group(const PagedShapeKey&, const std::vector<PagedShapeKey>&, bool);

}  // namespace mqajit::tuning
