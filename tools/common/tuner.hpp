#pragma once
// The mqa_logits (prefill) tuner's steps for one shape on the live GPU: its candidates, each
// verified against the reference kernel on a fresh problem of the shape and timed on a full-size
// one (L2 flushed, median), through the search of candidate_search.hpp.

#include <functional>
#include <string>
#include <vector>

#include "mqajit/tensor.hpp"
#include "runtime/backend.hpp"
#include "runtime/device.hpp"
#include "tools/common/candidate_search.hpp"
#include "tools/common/shapes.hpp"
#include "tuning_db/tuned_row.hpp"

namespace mqajit::tools {

struct ShapeResult {
    bool complete = false;   // false when interrupted before the shape finished
    TunedRow row;
    double flops = 0;        // useful FLOPs of the shape (unmasked pairs x 2 x H x D, causal)
    std::vector<CandidateResult> candidates{};
};

// Candidates for a shape on `arch`: the baseline plus every registered variant that can run
// there (every vendor's families), less those named in `excluded`.
std::vector<std::string> tuning_candidates(std::string_view arch, const BenchShape& shape,
                                           const std::vector<std::string>& excluded = {});

// Checks the names given to --exclude: each must be "baseline" or a variant name. Throws
// Error(invalid_argument) naming the first that is neither.
void check_excluded_names(const std::vector<std::string>& names);

// "nvrtc 13.0": the compiler a tuned row records, the backend's run-time compiler (clang's, for
// `mqajit aot` code objects, where an AMD machine has no hiprtc).
std::string kernel_compiler_version(const Backend& backend);


// "H=32 D=128 S=2048 N=8192 clean_logits=0": how the tuner names a shape in its lines.
std::string shape_label(const BenchShape& shape);

// The mode a shape is tuned and timed in: its own, else clean_logits=0 (the callers').
bool clean_logits_of(const BenchShape& shape);
// The logits' element type a shape is tuned and timed with.
DType logits_dtype_of(const BenchShape& shape);

// Tunes `shape` in its mode (clean_logits_of): every candidate is checked and timed in it, and
// the row's key carries it.
ShapeResult tune_shape(Device& device, const BenchShape& shape, const TuneSettings& settings,
                       const std::function<void(const std::string&)>& progress);

// Re-checks a tuned row's kernel on fresh data and re-times it, in the row's clean_logits mode.
RecheckResult recheck_row(Device& device, const TunedRow& row, const TuneSettings& settings);

}  // namespace mqajit::tools
