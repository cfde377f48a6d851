#include "tools/common/shapes.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "core/check.hpp"
#include "core/files.hpp"
#include "core/parse_number.hpp"
#include "core/utf8.hpp"
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
    const std::string text = read_regular_file(path, "shapes file");
    const std::vector<std::string_view> lines = text_lines(text);
    const std::string_view header_line = lines.empty() ? std::string_view() : lines.front();
    MQAJIT_CHECK(!header_line.empty(), "{} is empty; it needs a header line", path.string());
    std::map<std::string, std::size_t> column;
    const auto header = tuning::split_csv_line(header_line);
    for (std::size_t i = 0; i < header.size(); ++i) {
        MQAJIT_CHECK(column.emplace(header[i], i).second, "{}:1: column {} appears twice", path.string(), header[i]);
    }
    MQAJIT_CHECK(column.contains("seq_len") && column.contains("seq_len_kv"),
                 "{}:1: the header must name seq_len and seq_len_kv (got '{}')", path.string(), header_line);
    std::vector<BenchShape> shapes;
    for (std::size_t index = 1; index < lines.size(); ++index) {
        const std::string_view line = lines[index];
        const std::size_t number = index + 1;
        if (line.empty() || line[0] == '#') continue;
        MQAJIT_CHECK(!invalid_utf8_at(line), "{}:{}: the line is not valid UTF-8; save the file as UTF-8", path.string(),
                     number);
        const auto fields = tuning::split_csv_line(line);
        // NOTES: checked into int: a value that does not fit is an error, never truncated.
        auto value = [&](const char* name, int fallback) {
            auto it = column.find(name);
            if (it == column.end()) return fallback;
            MQAJIT_CHECK(it->second < fields.size(), "{}:{}: missing column {}", path.string(), number, name);
            std::string problem;
            const auto parsed = parse_whole_int(fields[it->second], &problem);
            MQAJIT_CHECK(parsed.has_value(), "{}:{}: {} {}", path.string(), number, name, problem);
            return *parsed;
        };
        BenchShape shape{.heads = value("heads", 32), .head_dim = value("head_dim", 128),
                         .seq_len = value("seq_len", 0), .seq_len_kv = value("seq_len_kv", 0),
                         .arch = column.contains("gfx") && column["gfx"] < fields.size() ? fields[column["gfx"]] : "",
                         .cu_num = value("cu_num", 0)};
        MQAJIT_CHECK(shape.seq_len >= 1 && shape.seq_len_kv >= 1, "{}:{}: seq_len and seq_len_kv must be positive",
                     path.string(), number);
        if (auto it = column.find("clean_logits"); it != column.end() && it->second < fields.size() &&
                                                   !fields[it->second].empty()) {
            const std::string& mode = fields[it->second];
            MQAJIT_CHECK(mode == "0" || mode == "1", "{}:{}: clean_logits is '{}'; it must be 0 or 1 (or empty: "
                         "not said)", path.string(), number, mode);
            shape.clean_logits = mode == "1" ? 1 : 0;
        }
        if (auto it = column.find("logits_dtype"); it != column.end() && it->second < fields.size() &&
                                                   !fields[it->second].empty()) {
            const std::string& dtype = fields[it->second];
            MQAJIT_CHECK(dtype == "float32" || dtype == "bfloat16", "{}:{}: logits_dtype is '{}'; it must be float32 "
                         "or bfloat16 (or empty: float32)", path.string(), number, dtype);
            shape.logits_dtype = dtype;
        }
        shapes.push_back(shape);
    }
    return shapes;
}

std::vector<int> parse_clean_logits_modes(std::string_view option, std::string_view text) {
    std::vector<int> modes;
    std::size_t begin = 0;
    while (true) {
        const std::size_t comma = text.find(',', begin);
        const std::string_view part = text.substr(begin, comma == std::string_view::npos ? comma : comma - begin);
        MQAJIT_CHECK(part == "0" || part == "1", "{} '{}': give 0, 1 or 0,1 (0: no -inf outside the windows, what "
                     "engines call; 1: -inf written there)", option, text);
        const int mode = part == "1" ? 1 : 0;
        MQAJIT_CHECK(std::find(modes.begin(), modes.end(), mode) == modes.end(), "{} '{}' names {} twice", option,
                     text, mode);
        modes.push_back(mode);
        if (comma == std::string_view::npos) return modes;
        begin = comma + 1;
    }
}

std::vector<BenchShape> in_modes(const std::vector<BenchShape>& shapes, const std::optional<std::vector<int>>& modes) {
    return in_modes<BenchShape>(shapes, modes);
}

bool same_dims(const BenchShape& a, const BenchShape& b) {
    return a.heads == b.heads && a.head_dim == b.head_dim && a.seq_len == b.seq_len && a.seq_len_kv == b.seq_len_kv &&
           a.logits_dtype == b.logits_dtype;
}

}  // namespace mqajit::tools
