#pragma once
// The decode (paged_mqa_logits) shapes `mqajit bench` and `mqajit tune --op paged_mqa_logits`
// run: the untuned decode CSVs (model_configs/paged_mqa_logits_untuned_<model>.csv) or flags.
// A shape is a decode table key less the device (next_n, heads, head_dim, block_kv, clean_logits,
// batch) plus the average contexts it is timed over: the table has no context column, so a tuned
// row answers for every context and is tuned over several.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mqajit::tools {

struct PagedBenchShape {
    int batch = 1;
    int next_n = 1;
    int heads = 64;
    int head_dim = 128;
    int block_kv = 64;
    // Average contexts (each request's uniform in 0.7-1.3x, as make_paged_problem spreads them).
    std::vector<int> contexts{};
    std::string arch{};  // from a "gfx" column when the file has one
    int cu_num = 0;    // from a "cu_num" column when the file has one
    std::optional<int> clean_logits{};  // nullopt: not said (in_modes decides)
};

// Whether two shapes differ at most in their mode (group_modes_of_a_shape in shapes.hpp).
bool same_dims(const PagedBenchShape& a, const PagedBenchShape& b);

// Reads a decode shapes CSV: a header naming batch, next_n, heads and context_len (contexts
// separated by ';'), and optionally head_dim (default 128), block_kv (64), gfx, cu_num and
// clean_logits (an empty field: not said); other columns are ignored. Anything malformed throws
// Error(invalid_argument) naming file:line.
std::vector<PagedBenchShape> read_paged_shapes_csv(const std::filesystem::path& path);

// The shipped untuned decode file of a model ("glm5", "deepseek" or "deepseek_v32"), from the
// installed or source configs folder. Throws Error(not_found) when there is none.
std::filesystem::path shipped_paged_shapes_file(std::string_view model);

// The contexts the shipped untuned files time a batch over: 4k, 32k and 128k while batch x
// context stays within 16M tokens (the bar rows). Used where a tuned row, which records
// none, is timed again (`tune --run-config`).
std::vector<int> default_decode_contexts(std::int64_t batch);

// "1,32,128" -> {1, 32, 128}: a comma-separated list of positive integers. Throws
// Error(invalid_argument) naming `option` for anything else.
std::vector<int> parse_positive_list(std::string_view option, std::string_view text);

// Every combination of the given lists, batch-major (then next_n, heads), each with all `contexts`.
std::vector<PagedBenchShape> paged_shapes_from_lists(const std::vector<int>& batches, const std::vector<int>& next_ns,
                                                     const std::vector<int>& heads, int head_dim, int block_kv,
                                                     const std::vector<int>& contexts);

// "B=32 next_n=2 H=64 D=128 block_kv=64 clean_logits=0": how the tools name a decode shape.
std::string paged_shape_label(const PagedBenchShape& shape);
// "4096;32768": the context_len field of a shape.
std::string contexts_field(const std::vector<int>& contexts);

}  // namespace mqajit::tools
