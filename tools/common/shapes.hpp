#pragma once
// The benchmark shape lists (GLM-5 and DeepSeek-V3.2 prefill) and shape files.

#include <filesystem>
#include <string>
#include <vector>

namespace mqajit::tools {

struct BenchShape {
    int heads = 32;
    int head_dim = 128;
    int seq_len = 0;
    int seq_len_kv = 0;
    std::string arch;  // from a "gfx" column when the file has one
    int cu_num = 0;    // from a "cu_num" column when the file has one
};

// The 24 GLM-5 prefill shapes (H=32, D=128) the project benchmarks.
std::vector<BenchShape> glm5_shapes();
// DeepSeek-V3.2 (H=64, D=128): seq_len {256..8192} x seq_len_kv {4096..65536}, S <= N, S*N*4 <= 512 MiB.
std::vector<BenchShape> deepseek_v32_shapes();

// Reads a CSV with a header naming at least seq_len and seq_len_kv (heads, head_dim optional,
// default 32 and 128; gfx and cu_num optional; other columns ignored), like the untuned tables. Malformed lines throw
// Error(invalid_argument) naming file:line.
std::vector<BenchShape> read_shapes_csv(const std::filesystem::path& path);

}  // namespace mqajit::tools
