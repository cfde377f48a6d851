#pragma once
// `mqajit tune --devices 0,1,...`: the parts that need no GPU and no process. Which devices,
// which shapes each worker tunes, the shape file a worker reads, and which of a worker's rows are
// its own (tune_output_csv.hpp merges them into the output).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/common/shapes.hpp"
#include "tuning_db/tuned_row.hpp"

namespace mqajit::tools {

// "0,1,3" -> {0, 1, 3}. Throws Error(invalid_argument) for an empty list, a non-number, a
// negative ordinal or a repeated one.
std::vector<int> parse_device_list(std::string_view text);

// Deals `shapes` round robin onto `num_workers` parts (shape i goes to part i % num_workers), so
// each part mixes small and large shapes; parts may be empty when there are fewer shapes.
std::vector<std::vector<BenchShape>> split_round_robin(const std::vector<BenchShape>& shapes, std::size_t num_workers);

// Writes shapes in the untuned-CSV layout read_shapes_csv reads back (gfx,cu_num,heads,head_dim,
// clean_logits,seq_len,seq_len_kv; an unknown arch, cu_num or mode stays empty / 0 / empty).
void write_shapes_csv(const std::filesystem::path& path, const std::vector<BenchShape>& shapes);

// Whether a row of key `key` tunes `shape`: same heads, head_dim, seq_len and seq_len_kv, and arch,
// cu_num and clean_logits too where the shape names them.
bool tunes_shape(const ShapeKey& key, const BenchShape& shape);

// For each shape in order, the last of `rows` that tunes it (tunes_shape). A worker's CSV also holds the copies
// of the output's earlier rows it started from; picking its own shapes leaves those out, so a
// stale copy never beats another worker's new row.
std::vector<TunedRow> rows_for_shapes(const std::vector<TunedRow>& rows, const std::vector<BenchShape>& shapes);

// The CUDA_VISIBLE_DEVICES value that shows a worker only the GPU `ordinal` of this process: the
// ordinal itself, or the matching entry of the CUDA_VISIBLE_DEVICES this process inherited.
// Throws Error(invalid_argument) when the inherited list has no such entry.
std::string worker_visible_devices(int ordinal, const std::optional<std::string>& inherited);

}  // namespace mqajit::tools
