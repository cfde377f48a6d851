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

// Index of the largest value not above `wanted` in ascending [first, last); `first` when every
// value is above it.
template <class It>
It floor_or_first(It first, It last, std::int64_t wanted) {
    auto above = std::upper_bound(first, last, wanted);
    return above == first ? first : above - 1;
}

}  // namespace

template <class Key>
TunedGroup<Key>::TunedGroup(std::vector<Row> rows) : rows_(std::move(rows)) {
    std::ranges::sort(rows_, {}, [](const Row& row) { return lengths_of(row.key); });
    inner_values_.reserve(rows_.size());
    if constexpr (kLevels == 1) outer_first_.push_back(0);
    for (std::size_t i = 0; i < rows_.size(); ++i) {
        const Lengths<Key> lengths = lengths_of(rows_[i].key);
        inner_values_.push_back(lengths[kLevels - 1]);
        if (kLevels == 2 && (outer_values_.empty() || outer_values_.back() != lengths[0])) {
            outer_values_.push_back(lengths[0]);
            outer_first_.push_back(i);
        }
    }
    outer_first_.push_back(rows_.size());
}

template <class Key>
std::size_t TunedGroup<Key>::outer_index(const Lengths<Key>& wanted) const {
    if constexpr (kLevels == 1) {
        return 0;
    } else {
        return static_cast<std::size_t>(floor_or_first(outer_values_.begin(), outer_values_.end(), wanted[0]) -
                                        outer_values_.begin());
    }
}

template <class Key>
std::size_t TunedGroup<Key>::row_index(std::size_t k, std::int64_t wanted) const {
    const auto first = inner_values_.begin() + static_cast<std::ptrdiff_t>(outer_first_[k]);
    const auto last = inner_values_.begin() + static_cast<std::ptrdiff_t>(outer_first_[k + 1]);
    return static_cast<std::size_t>(floor_or_first(first, last, wanted) - inner_values_.begin());
}

template <class Key>
const typename TunedGroup<Key>::Row* TunedGroup<Key>::find(const Key& shape) const {
    if (rows_.empty()) return nullptr;
    const Lengths<Key> wanted = lengths_of(shape);
    return &rows_[row_index(outer_index(wanted), wanted[kLevels - 1])];
}

template <class Key>
const typename TunedGroup<Key>::Row* TunedGroup<Key>::explain(const Key& shape, std::vector<std::string>& steps) const {
    if (rows_.empty()) return nullptr;
    constexpr auto names = length_names<Key>();
    const Lengths<Key> wanted = lengths_of(shape);
    const std::size_t k = outer_index(wanted);
    std::string scope;  // " at seq_len_kv=16384": the first length chosen, with two
    if (kLevels == 2) {
        steps.push_back(describe_choice(names[0], wanted[0], outer_values_[k], outer_values_, ""));
        scope = fmt::format(" at {}={}", names[0], outer_values_[k]);
    }
    const std::vector<std::int64_t> tuned(inner_values_.begin() + static_cast<std::ptrdiff_t>(outer_first_[k]),
                                          inner_values_.begin() + static_cast<std::ptrdiff_t>(outer_first_[k + 1]));
    const std::size_t row = row_index(k, wanted[kLevels - 1]);
    steps.push_back(describe_choice(names[kLevels - 1], wanted[kLevels - 1], inner_values_[row], tuned, scope));
    return &rows_[row];
}

template class TunedGroup<ShapeKey>;
template class TunedGroup<PagedShapeKey>;
template class TunedGroup<TopkShapeKey>;

}  // namespace mqajit::tuning
