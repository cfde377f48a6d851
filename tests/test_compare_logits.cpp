// compare_logits on the CPU: a problem large enough to be split over threads must give the counts,
// the calc_diff and the first offending element that one pass over the rows gives.

#include <doctest/doctest.h>

#include <bit>
#include <limits>
#include <string>

#include "tools/common/problem.hpp"

using namespace mqajit;
using namespace mqajit::tools;

namespace {

// Reference values for a problem: in-window entries a smooth function of the position, -inf elsewhere.
std::vector<float> fake_reference(const HostProblem& p) {
    std::vector<float> out(static_cast<std::size_t>(p.seq_len) * p.logits_row_stride,
                           -std::numeric_limits<float>::infinity());
    for (int i = 0; i < p.seq_len; ++i) {
        const int end = std::max(0, std::min(p.cu_ends[i], p.seq_len_kv));
        for (int j = std::max(0, p.cu_starts[i]); j < end; ++j)
            out[static_cast<std::size_t>(i) * p.logits_row_stride + j] = 1.0f + static_cast<float>((i * 7 + j) % 13);
    }
    return out;
}

}  // namespace

TEST_CASE("compare_logits: a large comparison, split over threads, counts as one pass does") {
    // 64 x 65536 = 4M logits: several threads wherever more than one core is there.
    const HostProblem p = make_problem(64, 65536, 1, 16, MaskKind::causal, 7);
    const std::vector<float> expected = fake_reference(p);
    std::vector<float> got = expected;
    const auto at = [&](int i, int j) -> float& { return got[static_cast<std::size_t>(i) * p.logits_row_stride + j]; };

    Comparison same = compare_logits(p, got, expected, true);
    CHECK(same.passed(1e-12));
    CHECK(same.checked == p.unmasked_pairs());
    CHECK(same.calc_diff == doctest::Approx(0.0));

    at(60, 5) = std::bit_cast<float>(kPoisonBits);           // never written, last thread's rows
    at(50, 7) = std::numeric_limits<float>::quiet_NaN();     // NaN
    at(10, 65535) = 3.0f;                                    // past row 10's causal end: wants -inf
    at(33, 100) = -std::numeric_limits<float>::infinity();   // -inf inside the window
    at(40, 200) *= 2.0f;                                     // a wrong value
    const Comparison c = compare_logits(p, got, expected, true);
    CHECK(c.poisoned == 1);
    CHECK(c.nan_count == 1);
    CHECK(c.mask_mismatches == 2);
    CHECK(c.checked == p.unmasked_pairs() - 3);
    CHECK(c.calc_diff > 0);
    CHECK(c.calc_diff < 1e-5);
    CHECK(c.first_problem.find("[10, 65535]") == 0);  // the earliest row, whichever thread saw it
    CHECK_FALSE(c.passed(1e-5));

    // Not clean: entries outside the windows are not looked at.
    const Comparison loose = compare_logits(p, got, expected, false);
    CHECK(loose.mask_mismatches == 1);
    CHECK(loose.first_problem.find("[33, 100]") == 0);
}
