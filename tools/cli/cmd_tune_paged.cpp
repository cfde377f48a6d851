// mqajit tune --op paged_mqa_logits -i paged_mqa_logits_untuned_<model>.csv -o tuned.csv: tunes
// each decode shape on the live GPU over its contexts (tools/common/paged_tuner.hpp), through the
// loops every operator's tune shares (tune_loop.hpp): each finished row at once in the output
// CSV (the decode table's format, for `mqajit db import --op paged_mqa_logits`) and the user
// database, every candidate's outcome in --json-file. One GPU per process: --devices is refused.
// --run-config tuned.csv re-checks and re-times a decode table's rows over --context-len.

#include <fmt/format.h>

#include "tools/cli/tune_command.hpp"
#include "tools/cli/tune_loop.hpp"
#include "tools/common/paged_shapes.hpp"
#include "tools/common/paged_tuner.hpp"
#include "tools/common/shapes.hpp"
#include "tools/common/tune_json.hpp"

namespace mqajit::cli {

int run_paged_tune(const TuneOptions& o) {
    begin_tuning(o);
    const ShapeTuning<tools::PagedBenchShape, PagedShapeKey, tools::PagedShapeResult> decode{
        .label = [](const tools::PagedBenchShape& s) {
            return fmt::format("{} contexts={}", tools::paged_shape_label(s), tools::contexts_field(s.contexts));
        },
        .key = [](const tools::PagedBenchShape& s, Device& device) {
            return PagedShapeKey{.arch = Arch::parse(device.arch()).name, .cu_num = device.multiprocessor_count(),
                                 .next_n = s.next_n, .heads = s.heads, .head_dim = s.head_dim,
                                 .block_kv = s.block_kv, .clean_logits = tools::clean_logits_of(s) ? 1 : 0,
                                 .batch = s.batch};
        },
        .candidates = [](std::string_view arch, const tools::PagedBenchShape& s,
                         const std::vector<std::string>& excluded) {
            return tools::paged_tuning_candidates(arch, s, excluded).size();
        },
        .tune = tools::tune_paged_shape,
        .json_row = tools::paged_tune_json_row};
    return tune_shapes<tools::PagedBenchShape>(
        o, [&] { return tools::in_modes(tools::read_paged_shapes_csv(o.input), modes_of(o)); }, decode);
}

int run_paged_config_check(const TuneOptions& o) {
    // NOTES: a decode row records no context, so it is re-timed over the contexts given or those
    // the shipped untuned files give its batch; `us` compares when they are the ones it was tuned on.
    const std::optional<std::vector<int>> contexts =
        o.context_len ? std::optional(tools::parse_positive_list("--context-len", *o.context_len)) : std::nullopt;
    auto contexts_of = [contexts](const PagedTunedRow& row) {
        return contexts.value_or(tools::default_decode_contexts(row.key.batch));
    };
    return recheck_table<PagedShapeKey>(
        o,
        [&](Device& device, const PagedTunedRow& row, const tools::TuneSettings& settings) {
            return tools::recheck_paged_row(device, row, contexts_of(row), settings);
        },
        [&](const PagedTunedRow& row) {
            return fmt::format("B={} next_n={} H={} D={} block_kv={} clean_logits={} contexts={}", row.key.batch,
                               row.key.next_n, row.key.heads, row.key.head_dim, row.key.block_kv,
                               row.key.clean_logits, tools::contexts_field(contexts_of(row)));
        });
}

}  // namespace mqajit::cli
