#include "tuning_db/group_choice.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.hpp"

namespace mqajit::tuning {
namespace {

template <class Key>
bool has(const std::vector<Key>& tuned, const Key& key) {
    return std::ranges::any_of(tuned, [&](const Key& g) { return same_group(g, key); });
}

template <class Key>
std::string other_mode_note(const Key& wanted, int served_mode) {
    return fmt::format("no rows tuned with clean_logits={}: the clean_logits={} rows serve (the same kernels, "
                       "timed in the other mode; `{} --clean-logits {}` tunes this one)",
                       wanted.clean_logits, served_mode, Key::kOp.tune_command, wanted.clean_logits);
}

std::string other_dtype_note(const ShapeKey& wanted, const std::string& served_dtype) {
    return fmt::format("no rows tuned with logits_dtype={}: the logits_dtype={} rows serve (the same kernels, "
                       "timed writing {} logits; `{} --logits-dtype {}` tunes this one)",
                       wanted.logits_dtype, served_dtype, served_dtype, ShapeKey::kOp.tune_command,
                       wanted.logits_dtype);
}

// A group that may stand in for the call's, and the sentences that say how it differs.
template <class Key>
struct StandIn {
    Key group;
    std::vector<std::string> notes;
};

// The groups of the call's cu_num that may answer it, best first: its own; for a table with a mode
// column, its own in the other clean_logits mode; then, for a table keyed by the logits dtype, the same two with float32 rows,
// then with any other dtype's.
template <class Key>
std::vector<StandIn<Key>> stand_ins(const Key& wanted) {
    std::vector<std::string> dtypes{""};  // "": the call's own, for a table without the column
    if constexpr (requires { wanted.logits_dtype; }) {
        dtypes = {wanted.logits_dtype};
        for (std::string_view dtype : kLogitsDtypes) {
            if (dtype != wanted.logits_dtype) dtypes.emplace_back(dtype);
        }
    }
    std::vector<StandIn<Key>> list;
    if constexpr (!has_mode_column<Key>) {
        list.push_back({wanted, {}});  // a table without a mode column has no dtype column either
        return list;
    } else {
        for (const std::string& dtype : dtypes) {
            for (const int mode : {wanted.clean_logits, wanted.clean_logits ? 0 : 1}) {
                StandIn<Key> candidate{wanted, {}};
                candidate.group.clean_logits = mode;
                if constexpr (requires { wanted.logits_dtype; }) {
                    candidate.group.logits_dtype = dtype;
                    if (dtype != wanted.logits_dtype) candidate.notes.push_back(other_dtype_note(wanted, dtype));
                }
                if (mode != wanted.clean_logits) candidate.notes.push_back(other_mode_note(wanted, mode));
                list.push_back(std::move(candidate));
            }
        }
        return list;
    }
}

template <class Key>
const StandIn<Key>* first_tuned(const std::vector<StandIn<Key>>& candidates, const std::vector<Key>& tuned) {
    for (const StandIn<Key>& candidate : candidates) {
        if (has(tuned, candidate.group)) return &candidate;
    }
    return nullptr;
}

}  // namespace

template <class Key>
GroupChoice<Key> choose_group(const Key& wanted_key, const std::vector<Key>& tuned, bool nearest_cu_num) {
    GroupChoice<Key> choice;
    const Key wanted = group_of(wanted_key);
    const std::vector<StandIn<Key>> own_candidates = stand_ins(wanted);
    if (const StandIn<Key>* own_device = first_tuned(own_candidates, tuned)) {
        choice.group = own_device->group;
        choice.fallbacks = own_device->notes;
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
    Key nearest_device = wanted;
    nearest_device.cu_num = nearest;
    // NOTES: the nearest cu_num has rows of these identity columns, so one of its stand-ins has rows.
    const std::vector<StandIn<Key>> nearest_candidates = stand_ins(nearest_device);
    const StandIn<Key>* served = first_tuned(nearest_candidates, tuned);
    MQAJIT_CHECK_KIND(internal, served != nullptr, "cu_num {} has rows of {} but none of its groups was found",
                      nearest, identity);
    choice.group = served->group;
    choice.fallbacks.push_back(fmt::format("{} is not tuned at cu_num {}: the nearest tuned cu_num, {}, serves "
                                           "(tuned: {}; MQAJIT_NEAREST_CU_NUM=0 turns this off)",
                                           identity, wanted.cu_num, nearest, fmt::join(cu_nums, ", ")));
    choice.fallbacks.insert(choice.fallbacks.end(), served->notes.begin(), served->notes.end());
    return choice;
}

template GroupChoice<ShapeKey> choose_group(const ShapeKey&, const std::vector<ShapeKey>&, bool);
template GroupChoice<PagedShapeKey> choose_group(const PagedShapeKey&, const std::vector<PagedShapeKey>&, bool);
template GroupChoice<TopkShapeKey> choose_group(const TopkShapeKey&, const std::vector<TopkShapeKey>&, bool);

}  // namespace mqajit::tuning
