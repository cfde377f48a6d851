#include "tools/common/shapes.hpp"

#include <fstream>
#include <map>
#include <string>

#include "core/check.hpp"
#include "core/settings.hpp"
#include "tuning_db/csv.hpp"

namespace mqajit::tools {

std::vector<BenchShape> glm5_shapes() {
    const int pairs[][2] = {{256, 4096},   {1024, 4096},  {2048, 4096},  {4096, 4096},  {256, 8192},
                            {1024, 8192},  {2048, 8192},  {4096, 8192},  {8192, 8192},  {256, 16384},
                            {1024, 16384}, {2048, 16384}, {4096, 16384}, {8192, 16384}, {256, 32768},
                            {1024, 32768}, {2048, 32768}, {4096, 32768}, {256, 49152},  {1024, 49152},
                            {2048, 49152}, {256, 60000},  {1024, 60000}, {2048, 60000}};
    std::vector<BenchShape> shapes;
    for (const auto& [s, n] : pairs) shapes.push_back({.heads = 32, .head_dim = 128, .seq_len = s, .seq_len_kv = n});
    return shapes;
}

std::vector<BenchShape> deepseek_v32_shapes() {
    std::vector<BenchShape> shapes;
    for (int n : {4096, 8192, 16384, 32768, 65536}) {
        for (int s : {256, 1024, 2048, 4096, 8192}) {
            if (s <= n && static_cast<long long>(s) * n * 4 <= (512ll << 20))
                shapes.push_back({.heads = 64, .head_dim = 128, .seq_len = s, .seq_len_kv = n});
        }
    }
    return shapes;
}


std::vector<BenchShape> read_shapes_csv(const std::filesystem::path& path) {
    std::ifstream file(path);
    MQAJIT_CHECK_KIND(not_found, file.good(), "cannot open shapes file {}", path.string());
    std::string line;
    MQAJIT_CHECK(static_cast<bool>(std::getline(file, line)), "{} is empty; it needs a header line", path.string());
    std::map<std::string, std::size_t> column;
    const auto header = tuning::split_csv_line(line);
    for (std::size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
    MQAJIT_CHECK(column.contains("seq_len") && column.contains("seq_len_kv"),
                 "{}:1: the header must name seq_len and seq_len_kv (got '{}')", path.string(), line);
    std::vector<BenchShape> shapes;
    for (int number = 2; std::getline(file, line); ++number) {
        if (line.empty() || line[0] == '#') continue;
        const auto fields = tuning::split_csv_line(line);
        auto value = [&](const char* name, int fallback) {
            auto it = column.find(name);
            if (it == column.end()) return fallback;
            MQAJIT_CHECK(it->second < fields.size(), "{}:{}: missing column {}", path.string(), number, name);
            return static_cast<int>(parse_int(fmt::format("{}:{} {}", path.string(), number, name), fields[it->second]));
        };
        BenchShape shape{.heads = value("heads", 32), .head_dim = value("head_dim", 128),
                         .seq_len = value("seq_len", 0), .seq_len_kv = value("seq_len_kv", 0),
                         .arch = column.contains("gfx") && column["gfx"] < fields.size() ? fields[column["gfx"]] : "",
                         .cu_num = value("cu_num", 0)};
        MQAJIT_CHECK(shape.seq_len >= 1 && shape.seq_len_kv >= 1, "{}:{}: seq_len and seq_len_kv must be positive",
                     path.string(), number);
        shapes.push_back(shape);
    }
    return shapes;
}

}  // namespace mqajit::tools
