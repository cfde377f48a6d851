#pragma once
// The tuned rows of one group (a key without its lengths), sorted so the lookup rule is a few
// binary searches with no allocation. The lengths are searched in their rank order (table_key.hpp):
// at each, the largest tuned value not above the call's among the rows that matched so far; a
// length below every tuned one uses the smallest. For mqa_logits that is
//   1. among the group's rows, the largest tuned seq_len_kv not above the call's;
//   2. among the rows with that seq_len_kv, the largest tuned seq_len not above the call's;
// for paged_mqa_logits the largest tuned batch not above the call's. An empty group answers
// nullptr (the baseline kernel).

#include <cstddef>
#include <string>
#include <vector>

#include "tuning_db/tuned_row.hpp"

namespace mqajit::tuning {

template <class Key>
class TunedGroup {
public:
    using Row = TunedRowOf<Key>;

    // Rows must share one group and have distinct lengths.
    explicit TunedGroup(std::vector<Row> rows);

    const Row* find(const Key& shape) const;
    // The same answer, with each step of the rule appended to `steps` in words.
    const Row* explain(const Key& shape, std::vector<std::string>& steps) const;

    std::size_t size() const { return rows_.size(); }
    bool empty() const { return rows_.empty(); }
    const std::vector<Row>& rows() const { return rows_; }

private:
    static constexpr std::size_t kLevels = num_lengths<Key>();
    static_assert(kLevels == 1 || kLevels == 2, "the rule searches one length or two");

    // With two lengths, the index of the first length's chosen value in outer_values_; with one, 0.
    // Its rows are [outer_first_[k], outer_first_[k + 1]).
    std::size_t outer_index(const Lengths<Key>& wanted) const;
    // The row of the last length's chosen value among the rows of outer_index k.
    std::size_t row_index(std::size_t k, std::int64_t wanted) const;

    std::vector<Row> rows_;  // ordered by their lengths in search order
    // NOTES: the searched values are kept apart from the rows, dense, for cache-friendly searches.
    std::vector<std::int64_t> outer_values_;  // two lengths: the distinct first-length values, ascending
    std::vector<std::size_t> outer_first_;    // each outer value's first row, then rows_.size(); one length: {0, size}
    std::vector<std::int64_t> inner_values_;  // rows_[i]'s last length
};

extern template class TunedGroup<ShapeKey>;
extern template class TunedGroup<PagedShapeKey>;
extern template class TunedGroup<TopkShapeKey>;

}  // namespace mqajit::tuning
