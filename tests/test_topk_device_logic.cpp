// The mqa_topk templates' block-level code (codegen/templates/topk_fused.cuh, topk_select.cuh) run
// on the CPU by tests/cuda_block_emulator.hpp, against a CPU sort of fresh random data: the select
// over candidates (ties across the k-th place, windows past one ranking segment, both orders, rows
// it must hand to the fallback), the sampled thresholds, the key sample and the unfused select with
// its row mask. The GPU tests run the same code for real; these catch its logic errors anywhere.

#include "tests/cuda_block_emulator.hpp"
// clang-format off
#include "topk_fused.cuh"
// clang-format on

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

namespace {

constexpr float kNegativeInfinity = -std::numeric_limits<float>::infinity();

struct Candidate {
    int key;
    float value;
};

// The rule of include/mqajit/mqa_topk.hpp: the `need` largest values, equal values by smaller key;
// then in key order unless sorted.
std::vector<Candidate> expected_selection(std::vector<Candidate> candidates, int need, bool sorted) {
    // NaN orders as its sign says: below -inf with the sign bit set, above +inf without.
    const auto nan_class = [](float v) { return std::isnan(v) ? (std::signbit(v) ? 0 : 2) : 1; };
    std::sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
        if (nan_class(a.value) != nan_class(b.value)) return nan_class(a.value) > nan_class(b.value);
        if (nan_class(a.value) == 1 && a.value != b.value) return a.value > b.value;
        return a.key < b.key;
    });
    candidates.resize(static_cast<std::size_t>(std::min<std::size_t>(candidates.size(), need)));
    if (!sorted) {
        std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) { return a.key < b.key; });
    }
    return candidates;
}

struct CandidateRow {
    int lo, hi, k, capacity;
    std::vector<Candidate> candidates;  // all of them, even past the capacity (only capacity are stored)
    float threshold = -std::numeric_limits<float>::infinity();  // what the kernel kept them at or above
};

struct RowResult {
    std::vector<int> indices;
    std::vector<float> values;
    int failed, fallback_start, fallback_end;
};

// Without values (`with_values` false) the kernel writes indices only: another output path.
RowResult run_candidates_row(const CandidateRow& row, bool sorted, bool with_values) {
    const int stored = std::min<int>(static_cast<int>(row.candidates.size()), row.capacity);
    std::vector<int> keys(static_cast<std::size_t>(row.capacity), -7);
    std::vector<float> values(static_cast<std::size_t>(row.capacity), NAN);
    for (int i = 0; i < stored; ++i) {
        keys[static_cast<std::size_t>(i)] = row.candidates[static_cast<std::size_t>(i)].key;
        values[static_cast<std::size_t>(i)] = row.candidates[static_cast<std::size_t>(i)].value;
    }
    int start = row.lo, end = row.hi, count = static_cast<int>(row.candidates.size());
    float threshold = row.threshold;
    RowResult result{std::vector<int>(static_cast<std::size_t>(row.k), -99),
                     std::vector<float>(static_cast<std::size_t>(row.k), NAN), -1, -1, -1};
    TopkFusedParams p{};
    p.cu_starts = &start;
    p.cu_ends = &end;
    p.rows = 1;
    p.seq_len_kv = std::max(row.hi, 1);
    p.k = row.k;
    p.capacity = row.capacity;
    p.counts = &count;
    p.thresholds = &threshold;
    p.candidate_keys = keys.data();
    p.candidate_values = values.data();
    p.failed = &result.failed;
    p.fallback_starts = &result.fallback_start;
    p.fallback_ends = &result.fallback_end;
    p.indices = result.indices.data();
    p.values = with_values ? result.values.data() : nullptr;
    p.sort_by_logit = sorted ? 1 : 0;
    std::vector<unsigned char> raw(static_cast<std::size_t>(MQA_TOPK_CANDIDATES_SHARED_BYTES(row.k, row.capacity)));
    const mqa_topk::GatherSlots slots = mqa_topk::gather_slots(raw.data(), row.k, row.capacity);
    const mqa_topk::CandidateArea area = mqa_topk::ranking_area(raw.data(), slots.ordered, slots.keys);
    mqa_topk::RadixState state{};
    int slot_counter = 0;
    cuda_emulator::run_block(mqa_topk::kThreads, [&] {
        mqa_topk::candidates_row<mqa_topk::kThreads>(p, 0, slots, area, state, &slot_counter);
    });
    return result;
}

// Candidates: `count` distinct keys of [lo, hi), values drawn from `distinct_values` levels (few
// levels: many ties), or continuous when 0.
CandidateRow make_row(std::mt19937_64& rng, int lo, int hi, int k, int capacity, int count, int distinct_values) {
    CandidateRow row{lo, hi, k, capacity, {}};
    std::vector<int> keys(static_cast<std::size_t>(hi - lo));
    std::iota(keys.begin(), keys.end(), lo);
    std::shuffle(keys.begin(), keys.end(), rng);
    std::normal_distribution<float> normal;
    std::uniform_int_distribution<int> level(0, std::max(distinct_values - 1, 0));
    for (int i = 0; i < count; ++i) {
        const float value = distinct_values > 0 ? static_cast<float>(level(rng)) * 0.25f - 1.0f : normal(rng);
        row.candidates.push_back({keys[static_cast<std::size_t>(i)], value});
    }
    return row;
}

void check_row(const CandidateRow& row, bool sorted, bool must_fail, bool with_values = true) {
    CAPTURE(with_values);
    const RowResult got = run_candidates_row(row, sorted, with_values);
    const int need = std::min(row.k, row.hi - row.lo);
    CHECK(got.failed == (must_fail ? 1 : 0));
    CHECK(got.fallback_start == (must_fail ? row.lo : 0));
    CHECK(got.fallback_end == (must_fail ? row.hi : 0));
    if (must_fail) {
        CHECK(std::all_of(got.indices.begin(), got.indices.end(), [](int i) { return i == -99; }));
        return;
    }
    const std::vector<Candidate> want = expected_selection(row.candidates, need, sorted);
    int wrong = 0;
    std::string first;
    for (int t = 0; t < row.k; ++t) {
        const bool filled = t < static_cast<int>(want.size());
        const int want_key = filled ? want[static_cast<std::size_t>(t)].key : -1;
        const float want_value = filled ? want[static_cast<std::size_t>(t)].value : kNegativeInfinity;
        const auto slot = static_cast<std::size_t>(t);
        const bool value_right = with_values ? got.values[slot] == want_value : std::isnan(got.values[slot]);
        if (got.indices[slot] != want_key || !value_right) {
            if (wrong++ == 0) {
                first = fmt::format("slot {}: got key {} value {}, want key {} value {}", t, got.indices[slot],
                                    got.values[slot], want_key, want_value);
            }
        }
    }
    INFO(first);
    CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("topk device logic: the select over candidates keeps the top k by the tie rule, in either order") {
    std::mt19937_64 rng(std::random_device{}());
    struct Shape {
        int lo, hi, k, capacity, count, distinct_values;
        const char* what;
    };
    const Shape shapes[] = {
        {0, 40000, 2048, 5120, 3100, 0, "about 1.5 k candidates of a long window"},
        {1000, 41000, 2048, 5120, 3100, 9, "ties across the k-th place"},
        {0, 300000, 2048, 5120, 5000, 0, "a window of five ranking segments"},
        {5, 2000, 2048, 5120, 1995, 0, "a window shorter than k: all of it"},
        {0, 9000, 100, 1024, 100, 3, "exactly k candidates"},
        {0, 9000, 1, 1024, 700, 2, "k = 1 among ties"},
        {0, 9000, 512, 1024, 1024, 1, "every candidate equal: the smallest keys"},
        {0, 40000, 2048, 5120, 5120, 0, "a full buffer: every slot of every thread"},
        {0, 60000, 4096, 10240, 9000, 0, "k = 4096: the wider block"},
        {0, 60000, 4096, 10240, 7000, 6, "k = 4096 with ties"},
        {0, 40000, 2048, 5120, 6000, 0, "more than the buffer holds: the fallback's"},
        {0, 40000, 2048, 5120, 2000, 0, "fewer than k: the fallback's"},
        {0, 0, 16, 1024, 0, 0, "an empty window"},
    };
    for (const Shape& s : shapes) {
        for (const bool sorted : {false, true}) {
            INFO(fmt::format("{} (window [{}, {}), k {}, {} candidates), sorted={}", s.what, s.lo, s.hi, s.k, s.count,
                             sorted));
            const int need = std::min(s.k, s.hi - s.lo);
            const CandidateRow row = make_row(rng, s.lo, s.hi, s.k, s.capacity, s.count, s.distinct_values);
            for (const bool with_values : {true, false})
                check_row(row, sorted, s.count > s.capacity || s.count < need, with_values);
        }
    }
}

TEST_CASE("topk device logic: the select takes every key equal to the k-th when exactly those are needed") {
    std::mt19937_64 rng(std::random_device{}());
    // k = 100 among 300: 95 keys above, then five equal to 0.5 and one a unit in the last place
    // below it (so only the last digit separates them), then 199 below: the five make the top k.
    CandidateRow row = make_row(rng, 0, 9000, 100, 1024, 300, 0);
    for (std::size_t i = 0; i < row.candidates.size(); ++i) {
        float& v = row.candidates[i].value;
        if (i < 95) v = 1.0f + static_cast<float>(i);
        else if (i < 100) v = 0.5f;
        else if (i == 100) v = std::nextafter(0.5f, 0.0f);
        else v = -1.0f - static_cast<float>(i);
    }
    std::shuffle(row.candidates.begin(), row.candidates.end(), rng);
    for (const bool sorted : {false, true})
        for (const bool with_values : {true, false}) check_row(row, sorted, false, with_values);
}

TEST_CASE("topk device logic: candidates below the threshold in key order (negative NaN) do not count") {
    std::mt19937_64 rng(std::random_device{}());
    // 2100 candidates at or above a threshold of 0, then 100 NaNs with the sign bit set (kept by
    // the kernel's !(v < t), but below -inf in key order): 2100 >= k proves the top k.
    CandidateRow row = make_row(rng, 0, 40000, 2048, 5120, 2200, 0);
    row.threshold = 0.0f;
    for (std::size_t i = 0; i < row.candidates.size(); ++i) {
        row.candidates[i].value = i < 2100 ? std::abs(row.candidates[i].value) : -std::numeric_limits<float>::quiet_NaN();
    }
    check_row(row, false, false);
    // Only 2000 at or above it: the window's k-th largest may lie below, so the fallback serves.
    for (std::size_t i = 2000; i < row.candidates.size(); ++i) {
        row.candidates[i].value = -std::numeric_limits<float>::quiet_NaN();
    }
    check_row(row, false, true);
}

TEST_CASE("topk device logic: thresholds are the sample's rank that 1.6 k keys of the window reach, to 2^-13") {
    std::mt19937_64 rng(std::random_device{}());
    std::normal_distribution<float> normal;
    const int sample_len = 2000, k = 2048, capacity = 5120, stride = 32;
    std::vector<float> sample(static_cast<std::size_t>(sample_len));
    for (float& v : sample) v = normal(rng);
    struct Row {
        int lo, hi;  // the window in keys
    };
    const Row rows[] = {{0, 64000}, {3200, 40000}, {0, 5000}, {100, 100}, {0, 33}};
    for (const Row& r : rows) {
        int start = r.lo, end = r.hi, sample_start = (r.lo + stride - 1) / stride, sample_end = (r.hi + stride - 1) / stride;
        float threshold = NAN;
        int count = 12345;
        TopkFusedParams p{};
        p.cu_starts = &start;
        p.cu_ends = &end;
        p.rows = 1;
        p.seq_len_kv = 64000;
        p.k = k;
        p.capacity = capacity;
        p.sample_stride = stride;
        p.sample_len = sample_len;
        p.oversample = 1.6f;
        p.sample_starts = &sample_start;
        p.sample_ends = &sample_end;
        p.sample_logits = sample.data();
        p.thresholds = &threshold;
        p.counts = &count;
        mqa_topk::RadixState state{};
        cuda_emulator::run_block(MQA_TOPK_THRESHOLDS_THREADS,
                                 [&] { mqa_topk::threshold_row<MQA_TOPK_THRESHOLDS_THREADS>(p, 0, state); });
        INFO(fmt::format("window [{}, {})", r.lo, r.hi));
        const int window = r.hi - r.lo, sample_window = sample_end - sample_start;
        if (window <= capacity) {
            // The whole window is kept, each key in the slot of its place: the count is its size.
            CHECK(threshold == kNegativeInfinity);
            CHECK(count == window);
            continue;
        }
        CHECK(count == 0);
        const int rank = static_cast<int>(std::ceil(1.6 * k * sample_window / window));
        std::vector<float> part(sample.begin() + sample_start, sample.begin() + sample_end);
        std::sort(part.begin(), part.end(), std::greater<>());
        // The bottom of the rank-th value's bin of 2^-13 (its float's upper 22 bits as an orderable key).
        const float at_rank = part[static_cast<std::size_t>(rank - 1)];
        CHECK(threshold <= at_rank);
        CHECK(std::abs(at_rank - threshold) <= std::ldexp(std::abs(at_rank), -12));
        const auto reaching = std::count_if(part.begin(), part.end(), [&](float v) { return v >= threshold; });
        const auto same_bin = std::count_if(part.begin(), part.end(), [&](float v) {
            return v >= threshold && v < at_rank;
        });
        CHECK(reaching >= rank);
        CHECK(reaching <= rank + same_bin + std::count(part.begin(), part.end(), at_rank));
    }
}

TEST_CASE("topk device logic: the sample takes every stride-th key, its scale, and each row's window") {
    const int num_kv = 1000, head_dim = 128, stride = 7, rows = 3;
    const int sample_len = (num_kv + stride - 1) / stride;
    std::vector<unsigned char> kv(static_cast<std::size_t>(num_kv) * 256);  // a row stride of 256 bytes
    for (std::size_t i = 0; i < kv.size(); ++i) kv[i] = static_cast<unsigned char>(i * 31 + 7);
    std::vector<float> scales(static_cast<std::size_t>(num_kv));
    for (int i = 0; i < num_kv; ++i) scales[static_cast<std::size_t>(i)] = 0.5f + static_cast<float>(i);
    std::vector<int> starts = {0, 13, 990}, ends = {1000, 14, 1500};
    std::vector<unsigned char> sample_kv(static_cast<std::size_t>(sample_len) * head_dim, 0);
    std::vector<float> sample_scales(static_cast<std::size_t>(sample_len), NAN);
    std::vector<int> sample_starts(rows, -1), sample_ends(rows, -1);
    TopkFusedParams p{};
    p.kv = kv.data();
    p.kv_scales = scales.data();
    p.cu_starts = starts.data();
    p.cu_ends = ends.data();
    p.kv_stride = 256;
    p.rows = rows;
    p.seq_len_kv = num_kv;
    p.head_dim = head_dim;
    p.sample_stride = stride;
    p.sample_len = sample_len;
    p.sample_kv = sample_kv.data();
    p.sample_scales = sample_scales.data();
    p.sample_starts = sample_starts.data();
    p.sample_ends = sample_ends.data();
    cuda_emulator::run_block(64, [&] { mqa_topk::sample_kv(p); });
    bool same = true;
    for (int i = 0; i < sample_len; ++i) {
        for (int d = 0; d < head_dim; ++d) {
            same = same && sample_kv[static_cast<std::size_t>(i * head_dim + d)] ==
                               kv[static_cast<std::size_t>(i * stride) * 256 + static_cast<std::size_t>(d)];
        }
        same = same && sample_scales[static_cast<std::size_t>(i)] == scales[static_cast<std::size_t>(i * stride)];
    }
    CHECK(same);
    // Sample key j stands for key j * stride: a window [s, e) holds sample keys [ceil(s/7), ceil(e/7)).
    CHECK(sample_starts == std::vector<int>{0, 2, 142});
    CHECK(sample_ends == std::vector<int>{143, 2, 143});
}

// The unfused select of row 0 of a [2, num_kv] logits matrix (row 1 masked out), against a sort.
// `capacity` candidate slots decide which path it takes: gathered after the first digit or the
// second, or (more keys share the k-th's prefix than fit) the pass in index order.
// Without values (`with_values` false) the select writes indices only: another output path.
void check_unfused_select(std::vector<float> row_logits, int lo, int hi, int k, int capacity, bool sorted,
                          bool with_values) {
    const int num_kv = static_cast<int>(row_logits.size()), rows = 2;
    CAPTURE(num_kv);
    CAPTURE(k);
    CAPTURE(capacity);
    CAPTURE(sorted);
    CAPTURE(with_values);
    std::vector<float> logits = row_logits;
    logits.resize(static_cast<std::size_t>(rows) * num_kv, 1.0f);
    std::vector<int> starts = {lo, 0}, ends = {hi, num_kv}, only = {1, 0};
    std::vector<int> indices(static_cast<std::size_t>(rows) * k, -99);
    std::vector<float> values(static_cast<std::size_t>(rows) * k, NAN);
    TopkSelectParams p{};
    p.logits = logits.data();
    p.cu_starts = starts.data();
    p.cu_ends = ends.data();
    p.indices = indices.data();
    p.values = with_values ? values.data() : nullptr;
    p.only_rows = only.data();
    p.logits_stride = num_kv;
    p.indices_stride = k;
    p.values_stride = k;
    p.rows = rows;
    p.seq_len_kv = num_kv;
    p.k = k;
    p.sort_by_logit = sorted ? 1 : 0;
    p.capacity = capacity;
    std::vector<unsigned char> raw(static_cast<std::size_t>(MQA_TOPK_CANDIDATES_SHARED_BYTES(k, capacity)));
    const mqa_topk::GatherSlots slots = mqa_topk::gather_slots(raw.data(), k, capacity);
    const mqa_topk::CandidateArea area = mqa_topk::ranking_area(raw.data(), slots.ordered, slots.keys);
    auto state = std::make_unique<mqa_topk::RadixState>();
    int counter = 0;
    cuda_emulator::run_block(mqa_topk::kThreads, [&] { mqa_topk::select_row(p, 0, *state, slots, area, &counter); });
    std::vector<Candidate> window;
    for (int j = std::max(lo, 0); j < std::min(hi, num_kv); ++j)
        window.push_back({j, logits[static_cast<std::size_t>(j)]});
    const std::vector<Candidate> want = expected_selection(window, k, sorted);
    int wrong = 0;
    for (int t = 0; t < k; ++t) {
        const bool filled = t < static_cast<int>(want.size());
        const int want_key = filled ? want[static_cast<std::size_t>(t)].key : -1;
        const float want_value = filled ? want[static_cast<std::size_t>(t)].value : kNegativeInfinity;
        const auto slot = static_cast<std::size_t>(t);
        const bool value_right = with_values ? values[slot] == want_value : std::isnan(values[slot]);
        wrong += indices[slot] != want_key || !value_right;
    }
    CHECK(wrong == 0);
    CHECK(std::all_of(indices.begin() + k, indices.end(), [](int i) { return i == -99; }));
}

TEST_CASE("topk device logic: the unfused select matches a sort on each of its paths, and leaves masked rows") {
    std::mt19937_64 rng(std::random_device{}());
    const int num_kv = 9000, k = 700;
    std::vector<float> levels(num_kv), continuous(num_kv), equal(num_kv, 0.25f), narrow(num_kv);
    std::uniform_int_distribution<int> level(0, 40);
    std::normal_distribution<float> normal(0.f, 1.f);
    for (float& v : levels) v = static_cast<float>(level(rng)) * 0.5f;  // ties across the k-th place
    for (float& v : continuous) v = normal(rng);
    // All in [1, 1.0078): one first digit, and about 1/8 of them per second-digit bin.
    for (float& v : narrow) v = 1.0f + std::ldexp(static_cast<float>(rng() % 65536), -23);
    for (const bool sorted : {false, true}) {
        for (const bool with_values : {true, false}) {
            const auto check = [&](const std::vector<float>& logits, int lo, int hi, int capacity) {
                check_unfused_select(logits, lo, hi, k, capacity, sorted, with_values);
            };
            check(continuous, 100, 8500, 4032);  // gathered after the first digit
            check(narrow, 0, num_kv, 4032);      // after the second
            check(levels, 100, 8500, 1000);      // after the first, with ties
            check(levels, 100, 8500, 700);       // ties that never fit: index order
            check(equal, 17, 9000, 4032);        // all equal: index order
            check(continuous, 100, 700, 4032);   // a window of fewer than k keys
            check(continuous, 100, 1500, 4032);  // up to 2 k keys: index order
        }
    }
}
