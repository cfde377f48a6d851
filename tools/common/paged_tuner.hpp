#pragma once
// The paged_mqa_logits (decode) tuner's steps for one shape on the live GPU: its candidates (the
// baseline and every registered decode variant that fits: pwgmma, or pmfma on AMD), each verified
// against the reference kernel on a fresh problem of the shape's batch, then timed at each of the
// shape's contexts on a full-size problem (L2 flushed, median), through the search of
// candidate_search.hpp. A candidate's time is the geometric mean of its medians over the contexts:
// the decode table has no context column, so a row must serve short and long contexts alike, and a
// geometric mean weighs a 10% loss at 4k as much as one at 128k.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/family_rules.hpp"  // Support
#include "runtime/device.hpp"
#include "tools/common/candidate_search.hpp"
#include "tools/common/device_paged_problem.hpp"
#include "tools/common/paged_problem.hpp"
#include "tools/common/paged_shapes.hpp"
#include "tuning_db/tuned_row.hpp"
#include "variants/arch.hpp"

namespace mqajit::tools {

// The mode a decode shape is tuned and timed in: its own, else clean_logits=0 (the callers').
bool clean_logits_of(const PagedBenchShape& shape);

// Whether `kernel` ("baseline" or a variant name) may serve the shape on `arch`: the baseline
// always, a variant when it is a paged one that fits (paged_variant_support). A name that does not
// parse throws Error(invalid_argument).
Support paged_kernel_support(const Arch& arch, const PagedBenchShape& shape, const std::string& kernel);

// Candidates for a decode shape on `arch`: the baseline plus every registered paged variant that
// fits the shape, less those named in `excluded`.
std::vector<std::string> paged_tuning_candidates(std::string_view arch, const PagedBenchShape& shape,
                                                 const std::vector<std::string>& excluded = {});

// The problem a shape's kernels are checked on: its batch, next_n, heads, head_dim and block_kv,
// 2-D context lengths, the longest of its contexts but at most kPagedCheckTokens keys in all.
inline constexpr int kPagedCheckTokens = 1 << 21;
PagedProblemSpec paged_check_spec(const PagedBenchShape& shape, std::uint64_t seed);
// The seed of the problem a shape is timed on at one context: the same in `tune`, `--run-config`
// and `bench`, so a re-check times the very problem the tuner timed (each request's context is
// drawn in 0.7-1.3x the average, and at small batches the draw alone moves the time by 20%).
// Checks never use it: they run on fresh data.
std::uint64_t paged_timing_seed(const PagedBenchShape& shape, int context);

// The problem a shape is timed on at one average context (2-D lengths, as engines pass).
PagedProblemSpec paged_timing_spec(const PagedBenchShape& shape, int context, std::uint64_t seed);

// The bytes a call must move at the least: every request's keys and scales once (the keys its
// last-seeing token reads, x (D + 4)), q, weights, and the logits written (the visible pairs; with
// clean_logits every row's max_context_len columns).
std::int64_t paged_floor_bytes(const HostPagedProblem& problem, bool clean_logits);

// A fresh random check problem of a shape, with the reference kernel's logits downloaded once;
// every kernel of the shape is checked against them (check_paged_against).
class PagedKernelCheck {
public:
    PagedKernelCheck(Device& device, const PagedBenchShape& shape, std::uint64_t seed);
    // Passed (calc_diff, -inf pattern, nothing unwritten, bitwise rerun) and served by `kernel`
    // itself; otherwise the problem. A context fault is rethrown (nothing runs after it).
    CandidateResult verify(const std::string& kernel);

private:
    DevicePagedProblem problem_;
    bool clean_logits_;
    std::vector<float> expected_;
};

// A fresh seed per problem (checks and timings alike).
std::uint64_t fresh_paged_seed();

struct PagedShapeResult {
    bool complete = false;   // false when interrupted before the shape finished
    PagedShapeKey key{};       // also when not complete
    PagedTunedRow row{};       // us: the winner's geometric mean over `contexts`
    std::vector<int> contexts{};
    std::vector<std::int64_t> floor_bytes{};  // per context, of the timed problem
    std::vector<CandidateResult> candidates{};
    std::map<std::string, std::vector<double>> context_us{};  // per candidate timed, its medians per context
};

PagedShapeResult tune_paged_shape(Device& device, const PagedBenchShape& shape, const TuneSettings& settings,
                                  const std::function<void(const std::string&)>& progress);

// Re-checks a tuned decode row's kernel on fresh data and re-times it over `contexts` (a row
// records none), in the row's mode.
RecheckResult recheck_paged_row(Device& device, const PagedTunedRow& row, const std::vector<int>& contexts,
                                const TuneSettings& settings);

}  // namespace mqajit::tools
