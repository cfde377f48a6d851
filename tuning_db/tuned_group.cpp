#include "tuning_db/tuned_group.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mqajit::tuning {
namespace {

std::string describe_choice(std::string_view name, std::int64_t wanted, std::int64_t chosen,
                            const std::vector<std::int64_t>& tuned, std::string_view scope) {
    const std::string list = fmt::format("{}", fmt::join(tuned, ", "));
    if (wanted < tuned.front())
        return fmt::format("{} {} is below every tuned {}{} ({}): use the smallest, {}", name, wanted, name, scope,
                           list, chosen);
    if (wanted == chosen) return fmt::format("{} {} is tuned exactly{} ({})", name, wanted, scope, list);
    return fmt::format("{} {}: the largest tuned {}{} not above it is {} (tuned: {})", name, wanted, name, scope,
                       chosen, list);
}

// The rule's walk over sorted lengths: at each level, the rows [first, last) that match so far
// narrow to those holding the chosen value. `on_level(level, first, last, chosen)` sees each step.
template <std::size_t N, class OnLevel>
std::size_t walk(const std::vector<std::array<std::int64_t, N>>& lengths, const std::array<std::int64_t, N>& wanted,
                 OnLevel&& on_level) {
    std::size_t first = 0;
    std::size_t last = lengths.size();
    for (std::size_t level = 0; level < N; ++level) {
        const auto at_level = [level](const std::array<std::int64_t, N>& l) { return l[level]; };
        const auto begin = lengths.begin();
        // NOTES: within [first, last) the rows agree on every earlier level, so this level is sorted.
        const auto above = std::ranges::upper_bound(begin + first, begin + last, wanted[level], {}, at_level);
        const std::size_t above_index = static_cast<std::size_t>(above - begin);
        const std::size_t chosen_row = above_index == first ? first : above_index - 1;
        const std::int64_t chosen = lengths[chosen_row][level];
        on_level(level, first, last, chosen);
        if (level + 1 == N) return chosen_row;
        const std::size_t chosen_end =
            above_index == first
                ? static_cast<std::size_t>(std::ranges::upper_bound(begin + first, begin + last, chosen, {}, at_level) - begin)
                : above_index;
        first = static_cast<std::size_t>(std::ranges::lower_bound(begin + first, begin + chosen_end, chosen, {},
                                                                  at_level) - begin);
        last = chosen_end;
    }
    return first;
}

}  // namespace

template <class Key>
TunedGroup<Key>::TunedGroup(std::vector<Row> rows) : rows_(std::move(rows)) {
    std::ranges::sort(rows_, {}, [](const Row& row) { return lengths_of(row.key); });
    lengths_.reserve(rows_.size());
    for (const Row& row : rows_) lengths_.push_back(lengths_of(row.key));
}

template <class Key>
const typename TunedGroup<Key>::Row* TunedGroup<Key>::find(const Key& shape) const {
    if (rows_.empty()) return nullptr;
    return &rows_[walk(lengths_, lengths_of(shape), [](std::size_t, std::size_t, std::size_t, std::int64_t) {})];
}

template <class Key>
const typename TunedGroup<Key>::Row* TunedGroup<Key>::explain(const Key& shape, std::vector<std::string>& steps) const {
    if (rows_.empty()) return nullptr;
    constexpr auto names = length_names<Key>();
    const Lengths<Key> wanted = lengths_of(shape);
    std::string scope;  // " at seq_len_kv=16384": the levels chosen so far
    const std::size_t row = walk(lengths_, wanted, [&](std::size_t level, std::size_t first, std::size_t last,
                                                       std::int64_t chosen) {
        std::vector<std::int64_t> tuned;
        for (std::size_t i = first; i < last; ++i) {
            if (tuned.empty() || tuned.back() != lengths_[i][level]) tuned.push_back(lengths_[i][level]);
        }
        steps.push_back(describe_choice(names[level], wanted[level], chosen, tuned, scope));
        scope += fmt::format("{} {}={}", scope.empty() ? " at" : ",", names[level], chosen);
    });
    return &rows_[row];
}

template class TunedGroup<ShapeKey>;
template class TunedGroup<PagedShapeKey>;

}  // namespace mqajit::tuning
