#include "tuning_db/tuned_group.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mqajit::tuning {
namespace {

// Index of the largest value not above `wanted` in ascending [first, last); `first` when every
// value is above it.
template <class It>
It floor_or_first(It first, It last, std::int64_t wanted) {
    auto above = std::upper_bound(first, last, wanted);
    return above == first ? first : above - 1;
}

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

}  // namespace

TunedGroup::TunedGroup(std::vector<TunedRow> rows) : rows_(std::move(rows)) {
    std::ranges::sort(rows_, [](const TunedRow& a, const TunedRow& b) {
        return std::tie(a.key.seq_len_kv, a.key.seq_len) < std::tie(b.key.seq_len_kv, b.key.seq_len);
    });
    seq_lens_.reserve(rows_.size());
    for (std::size_t i = 0; i < rows_.size(); ++i) {
        seq_lens_.push_back(rows_[i].key.seq_len);
        if (kv_lens_.empty() || kv_lens_.back() != rows_[i].key.seq_len_kv) {
            kv_lens_.push_back(rows_[i].key.seq_len_kv);
            kv_first_row_.push_back(i);
        }
    }
    kv_first_row_.push_back(rows_.size());
}

std::size_t TunedGroup::kv_index(std::int64_t seq_len_kv) const {
    return static_cast<std::size_t>(floor_or_first(kv_lens_.begin(), kv_lens_.end(), seq_len_kv) - kv_lens_.begin());
}

std::size_t TunedGroup::row_index(std::size_t kv, std::int64_t seq_len) const {
    const auto first = seq_lens_.begin() + static_cast<std::ptrdiff_t>(kv_first_row_[kv]);
    const auto last = seq_lens_.begin() + static_cast<std::ptrdiff_t>(kv_first_row_[kv + 1]);
    return static_cast<std::size_t>(floor_or_first(first, last, seq_len) - seq_lens_.begin());
}

const TunedRow* TunedGroup::find(std::int64_t seq_len, std::int64_t seq_len_kv) const {
    if (rows_.empty()) return nullptr;
    return &rows_[row_index(kv_index(seq_len_kv), seq_len)];
}

const TunedRow* TunedGroup::explain(std::int64_t seq_len, std::int64_t seq_len_kv,
                                    std::vector<std::string>& steps) const {
    if (rows_.empty()) return nullptr;
    const std::size_t kv = kv_index(seq_len_kv);
    steps.push_back(describe_choice("seq_len_kv", seq_len_kv, kv_lens_[kv], kv_lens_, ""));
    const std::vector<std::int64_t> seq_lens(seq_lens_.begin() + static_cast<std::ptrdiff_t>(kv_first_row_[kv]),
                                             seq_lens_.begin() + static_cast<std::ptrdiff_t>(kv_first_row_[kv + 1]));
    const TunedRow& row = rows_[row_index(kv, seq_len)];
    steps.push_back(describe_choice("seq_len", seq_len, row.key.seq_len, seq_lens,
                                    fmt::format(" at seq_len_kv={}", kv_lens_[kv])));
    return &row;
}

}  // namespace mqajit::tuning
