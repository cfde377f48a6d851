// mqajit tune --op mqa_topk -i shapes.csv -o mqa_topk_tuned.csv [--k 2048]: tunes each shape's
// top-k path and kernel on the live GPU (tools/common/topk_tuner.hpp), through the loops every
// operator's tune shares (tune_loop.hpp): each finished row at once in the output CSV (the mqa_topk
// table's format, for `mqajit db import --op mqa_topk`) and the user database. The input is a
// prefill shapes file (seq_len, seq_len_kv[, heads, head_dim, gfx, cu_num]). One GPU per process.
// --run-config mqa_topk_tuned.csv re-checks and re-times a table's rows.

#include <fmt/format.h>

#include "tools/cli/tune_command.hpp"
#include "tools/cli/tune_loop.hpp"
#include "tools/common/shapes.hpp"
#include "tools/common/topk_tuner.hpp"
#include "tools/common/tune_json.hpp"

namespace mqajit::cli {

int run_topk_tune(const TuneOptions& o) {
    begin_tuning(o);
    const ShapeTuning<tools::TopkBenchShape, TopkShapeKey, tools::TopkShapeResult> topk{
        .label = tools::topk_shape_label,
        .key = [](const tools::TopkBenchShape& s, Device& device) { return tools::topk_key_of(device, s); },
        .candidates = [](std::string_view arch, const tools::TopkBenchShape& s,
                         const std::vector<std::string>& excluded) {
            return tools::topk_tuning_candidates(arch, s.cu_num, s, excluded).size();
        },
        .tune = tools::tune_topk_shape,
        .json_row = tools::topk_tune_json_row};
    return tune_shapes<tools::TopkBenchShape>(
        o, [&] { return tools::topk_shapes(tools::read_shapes_csv(o.input), o.k.value_or(2048)); }, topk);
}

int run_topk_config_check(const TuneOptions& o) {
    return recheck_table<TopkShapeKey>(o, tools::recheck_topk_row, [](const TopkTunedRow& row) {
        return fmt::format("H={} S={} N={} k={}", row.key.heads, row.key.seq_len, row.key.seq_len_kv, row.key.k);
    });
}

}  // namespace mqajit::cli
