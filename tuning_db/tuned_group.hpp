#pragma once
// The tuned rows of one (arch, cu_num, heads, head_dim) group, sorted so the lookup rule is two
// binary searches with no allocation:
//   1. among the group's rows, the largest tuned seq_len_kv not above the call's;
//   2. among the rows with that seq_len_kv, the largest tuned seq_len not above the call's.
// A length below every tuned one uses the smallest. An empty group answers nullptr (baseline).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tuning_db/tuned_row.hpp"

namespace mqajit::tuning {

class TunedGroup {
public:
    // Rows must share one group and have distinct (seq_len, seq_len_kv).
    explicit TunedGroup(std::vector<TunedRow> rows);

    const TunedRow* find(std::int64_t seq_len, std::int64_t seq_len_kv) const;
    // The same answer, with each step of the rule appended to `steps` in words.
    const TunedRow* explain(std::int64_t seq_len, std::int64_t seq_len_kv, std::vector<std::string>& steps) const;

    std::size_t size() const { return rows_.size(); }
    bool empty() const { return rows_.empty(); }
    const std::vector<TunedRow>& rows() const { return rows_; }

private:
    std::size_t kv_index(std::int64_t seq_len_kv) const;
    std::size_t row_index(std::size_t kv, std::int64_t seq_len) const;

    std::vector<TunedRow> rows_;               // ordered by (seq_len_kv, seq_len)
    std::vector<std::int64_t> seq_lens_;       // rows_[i].key.seq_len, kept apart for a cache-dense search
    std::vector<std::int64_t> kv_lens_;        // the distinct tuned seq_len_kv values, ascending
    std::vector<std::size_t> kv_first_row_;    // rows of kv_lens_[k] are [kv_first_row_[k], kv_first_row_[k+1])
};

}  // namespace mqajit::tuning
