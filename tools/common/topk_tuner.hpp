#pragma once
// The mqa_topk tuner's steps for one shape on the live GPU. Candidates: the baseline (the unfused
// path with the pre-built logits kernel), the unfused path with the kernel the mqa_logits table
// serves the shape with (clean_logits=false), and the fused path with every twgmma variant that
// runs at the shape's heads and head_dim. Each is checked exactly on a fresh problem of the
// shape's N (at most kTopkCheckRows rows): its indices against the host's top k of the logits of
// the kernel it selects by (a twgmma variant's twin). Then each is timed on the full problem
// (L2 flushed, median) through the search of candidate_search.hpp.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/device.hpp"
#include "tools/common/candidate_search.hpp"
#include "tools/common/shapes.hpp"
#include "tuning_db/tuned_row.hpp"

namespace mqajit::tools {

struct TopkBenchShape {
    int heads = 32;
    int head_dim = 128;
    int seq_len = 0;
    int seq_len_kv = 0;
    int k = 2048;
    std::string arch{};  // from the input's gfx column, when it has one
    int cu_num = 0;      // from its cu_num column
};

// The shapes of a prefill shapes file (read_shapes_csv), each selecting k keys a row.
std::vector<TopkBenchShape> topk_shapes(const std::vector<BenchShape>& shapes, int k);

// "H=32 D=128 S=4096 N=65536 k=2048"
std::string topk_shape_label(const TopkBenchShape& shape);

TopkShapeKey topk_key_of(Device& device, const TopkBenchShape& shape);

// The candidates on `arch` with `cu_num` SMs (for the mqa_logits table's choice), less `excluded`.
std::vector<std::string> topk_tuning_candidates(std::string_view arch, int cu_num, const TopkBenchShape& shape,
                                                const std::vector<std::string>& excluded = {});

// The mqa_logits kernel whose values candidate `kernel` selects by: a twgmma variant's twin, else itself.
std::string selecting_kernel(const std::string& kernel);

inline constexpr int kTopkCheckRows = 128;

struct TopkShapeResult {
    bool complete = false;
    TopkShapeKey key{};
    TopkTunedRow row{};
    std::vector<CandidateResult> candidates{};
};

TopkShapeResult tune_topk_shape(Device& device, const TopkBenchShape& shape, const TuneSettings& settings,
                                const std::function<void(const std::string&)>& progress);

RecheckResult recheck_topk_row(Device& device, const TopkTunedRow& row, const TuneSettings& settings);

}  // namespace mqajit::tools
