#include "tuning_db/group_choice.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mqajit::tuning {
namespace {

bool has(std::span<const ShapeKey> tuned, const GroupKeyView& key) {
    return std::ranges::any_of(tuned, [&](const ShapeKey& g) { return group_tie(g) == key.tie(); });
}

GroupKeyView in_mode(GroupKeyView key, int clean_logits) {
    key.clean_logits = clean_logits;
    return key;
}

std::string other_mode_note(const GroupKeyView& wanted, int served_mode) {
    return fmt::format("no rows tuned with clean_logits={}: the clean_logits={} rows serve (the same kernels, "
                       "timed in the other mode; `mqajit tune --clean-logits {}` tunes this one)",
                       wanted.clean_logits, served_mode, wanted.clean_logits);
}

}  // namespace

GroupChoice choose_group(const GroupKeyView& wanted, std::span<const ShapeKey> tuned, bool nearest_cu_num) {
    GroupChoice choice;
    const int other_mode = wanted.clean_logits ? 0 : 1;
    if (has(tuned, wanted)) {
        choice.group = wanted.key();
        return choice;
    }
    if (has(tuned, in_mode(wanted, other_mode))) {
        choice.group = in_mode(wanted, other_mode).key();
        choice.fallbacks.push_back(other_mode_note(wanted, other_mode));
        return choice;
    }
    std::set<int> cu_nums;  // tuned SM counts of the same arch, heads and head_dim, ascending
    for (const ShapeKey& g : tuned) {
        if (g.arch == wanted.arch && g.heads == wanted.heads && g.head_dim == wanted.head_dim) cu_nums.insert(g.cu_num);
    }
    if (cu_nums.empty()) return choice;
    const std::string family =
        fmt::format("arch={} heads={} head_dim={}", wanted.arch, wanted.heads, wanted.head_dim);
    if (!nearest_cu_num) {
        choice.declined = fmt::format("{} is tuned only at cu_num {}, not {}; the nearest SM count is not used "
                                      "(MQAJIT_NEAREST_CU_NUM is off)",
                                      family, fmt::join(cu_nums, ", "), wanted.cu_num);
        return choice;
    }
    // NOTES: std::set is ascending and min_element keeps the first of equals: a tie goes to the smaller.
    // The distance in 64 bits: two ints' difference need not fit an int.
    const int nearest = *std::ranges::min_element(
        cu_nums, {}, [&](int cu) { return std::abs(std::int64_t{cu} - std::int64_t{wanted.cu_num}); });
    GroupKeyView served = wanted;
    served.cu_num = nearest;
    choice.fallbacks.push_back(fmt::format("{} is not tuned at cu_num {}: the nearest tuned cu_num, {}, serves "
                                           "(tuned: {}; MQAJIT_NEAREST_CU_NUM=0 turns this off)",
                                           family, wanted.cu_num, nearest, fmt::join(cu_nums, ", ")));
    if (!has(tuned, served)) {
        served.clean_logits = other_mode;
        choice.fallbacks.push_back(other_mode_note(wanted, other_mode));
    }
    choice.group = served.key();
    return choice;
}

}  // namespace mqajit::tuning
