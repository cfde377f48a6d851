#pragma once
// The benchmark shape lists (GLM-5 and DeepSeek-V3.2 prefill) and shape files.

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mqajit::tools {

struct BenchShape {
    int heads = 32;
    int head_dim = 128;
    int seq_len = 0;
    int seq_len_kv = 0;
    std::string arch{};  // from a "gfx" column when the file has one
    int cu_num = 0;      // from a "cu_num" column when the file has one
    // The call's mode (1: -inf outside the windows), from a "clean_logits" column or from
    // in_modes(); nullopt: not said.
    std::optional<int> clean_logits{};
    // The logits' element type, "float32" or "bfloat16" (a "logits_dtype" column, or --logits-dtype).
    std::string logits_dtype = "float32";
};

// The 24 GLM-5 prefill shapes (H=32, D=128) the project benchmarks.
std::vector<BenchShape> glm5_shapes();
// DeepSeek-V3.2 (H=64, D=128): seq_len {256..8192} x seq_len_kv {4096..65536}, S <= N, S*N*4 <= 512 MiB.
std::vector<BenchShape> deepseek_v32_shapes();

// Reads a CSV with a header naming at least seq_len and seq_len_kv (heads, head_dim optional,
// default 32 and 128; gfx, cu_num, clean_logits and logits_dtype optional, an empty field meaning
// "not said" (float32 for the dtype);
// other columns ignored), like the untuned tables. Malformed lines throw Error(invalid_argument)
// naming file:line.
std::vector<BenchShape> read_shapes_csv(const std::filesystem::path& path);

// "0", "1", "0,1" (the order kept) -> the clean_logits modes a --clean-logits option names.
// Throws Error(invalid_argument) naming `option` for anything else (a repeat, a 2, nothing).
std::vector<int> parse_clean_logits_modes(std::string_view option, std::string_view text);

// Whether two shapes differ at most in their clean_logits mode.
bool same_dims(const BenchShape& a, const BenchShape& b);

// The shapes to run, each in one mode. A shape that says no mode runs once in each of `modes`
// (nullopt: in clean_logits=0, the callers' mode); a shape that says one keeps it and runs only
// if `modes` is nullopt or lists it. Order: shape by shape, modes in the order given. For any
// shape type with an `std::optional<int> clean_logits` (BenchShape, PagedBenchShape).
template <class Shape>
std::vector<Shape> in_modes(const std::vector<Shape>& shapes, const std::optional<std::vector<int>>& modes) {
    const std::vector<int> unsaid = modes.value_or(std::vector<int>{0});
    std::vector<Shape> result;
    for (const Shape& shape : shapes) {
        if (shape.clean_logits) {
            if (!modes || std::find(modes->begin(), modes->end(), *shape.clean_logits) != modes->end())
                result.push_back(shape);
            continue;
        }
        for (int mode : unsaid) {
            Shape copy = shape;
            copy.clean_logits = mode;
            result.push_back(copy);
        }
    }
    return result;
}
std::vector<BenchShape> in_modes(const std::vector<BenchShape>& shapes, const std::optional<std::vector<int>>& modes);

// Consecutive shapes that differ only in their mode (same_dims), as groups: in_modes puts a
// shape's modes next to each other, and bench times a group's kernels in one measurement.
template <class Shape>
std::vector<std::vector<Shape>> group_modes_of_a_shape(const std::vector<Shape>& shapes) {
    std::vector<std::vector<Shape>> groups;
    for (const Shape& shape : shapes) {
        if (groups.empty() || !same_dims(groups.back().front(), shape)) groups.emplace_back();
        groups.back().push_back(shape);
    }
    return groups;
}

}  // namespace mqajit::tools
