#include "tools/common/paged_shapes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "core/check.hpp"
#include "core/files.hpp"
#include "core/settings.hpp"
#include "tuning_db/csv.hpp"
#include "tuning_db/locations.hpp"

namespace mqajit::tools {
namespace {

// NOTES: the shipped untuned files keep batch x context within 16M tokens: a 1.1 GB cache at
// D=128, and the bar's largest rows (B=128 at 128k, B=2048 at 4k) stay in.
constexpr std::int64_t kMaxDefaultTokens = std::int64_t{16} << 20;

std::vector<int> split_positive(std::string_view what, std::string_view text, char separator) {
    std::vector<int> values;
    std::size_t begin = 0;
    while (true) {
        const std::size_t end = text.find(separator, begin);
        const std::string_view part = text.substr(begin, end == std::string_view::npos ? end : end - begin);
        MQAJIT_CHECK(!part.empty(), "{} '{}': give positive integers separated by '{}'", what, text, separator);
        const std::int64_t value = parse_int(what, part);
        MQAJIT_CHECK(value >= 1 && value <= (1 << 30), "{} '{}': {} is not a count from 1 to 2^30", what, text,
                     value);
        values.push_back(static_cast<int>(value));
        if (end == std::string_view::npos) return values;
        begin = end + 1;
    }
}

}  // namespace

bool same_dims(const PagedBenchShape& a, const PagedBenchShape& b) {
    return a.batch == b.batch && a.next_n == b.next_n && a.heads == b.heads && a.head_dim == b.head_dim &&
           a.block_kv == b.block_kv && a.contexts == b.contexts;
}

std::vector<PagedBenchShape> read_paged_shapes_csv(const std::filesystem::path& path) {
    std::error_code error;
    MQAJIT_CHECK_KIND(not_found, std::filesystem::exists(path, error), "decode shapes file {} does not exist",
                      path.string());
    const std::string text = read_regular_file(path, "decode shapes file");
    const std::vector<std::string_view> lines = text_lines(text);
    const std::string_view header_line = lines.empty() ? std::string_view() : lines.front();
    MQAJIT_CHECK(!header_line.empty(), "{} is empty; it needs a header line", path.string());
    std::map<std::string, std::size_t, std::less<>> column;
    const auto header = tuning::split_csv_line(header_line);
    for (std::size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
    for (const char* needed : {"batch", "next_n", "heads", "context_len"}) {
        MQAJIT_CHECK(column.contains(needed), "{}:1: a decode shapes file names batch, next_n, heads and context_len "
                     "(like paged_mqa_logits_untuned_*.csv); this header lacks {}: '{}'", path.string(), needed,
                     header_line);
    }
    std::vector<PagedBenchShape> shapes;
    for (std::size_t index = 1; index < lines.size(); ++index) {
        const std::string_view line = lines[index];
        const std::size_t number = index + 1;
        if (line.find_first_not_of(" \t") == std::string_view::npos || line[0] == '#') continue;
        const auto fields = tuning::split_csv_line(line);
        const std::string place = fmt::format("{}:{}", path.string(), number);
        auto field = [&](std::string_view name) -> std::optional<std::string> {
            const auto it = column.find(name);
            if (it == column.end()) return std::nullopt;
            MQAJIT_CHECK(it->second < fields.size(), "{}: missing column {}", place, name);
            return fields[it->second];
        };
        auto count = [&](std::string_view name, int fallback) {
            const std::optional<std::string> value = field(name);
            if (!value) return fallback;
            return split_positive(fmt::format("{} {}", place, name), *value, ',').front();
        };
        PagedBenchShape shape{.batch = count("batch", 0), .next_n = count("next_n", 0), .heads = count("heads", 0),
                              .head_dim = count("head_dim", 128), .block_kv = count("block_kv", 64),
                              .contexts = split_positive(place + " context_len", field("context_len").value(), ';'),
                              .arch = field("gfx").value_or(""), .cu_num = 0};
        if (const auto cu_num = field("cu_num"); cu_num && !cu_num->empty()) shape.cu_num = count("cu_num", 0);
        if (const auto mode = field("clean_logits"); mode && !mode->empty()) {
            MQAJIT_CHECK(*mode == "0" || *mode == "1", "{}: clean_logits is '{}'; it must be 0 or 1 (or empty: not "
                         "said)", place, *mode);
            shape.clean_logits = *mode == "1" ? 1 : 0;
        }
        shapes.push_back(std::move(shape));
    }
    return shapes;
}

std::filesystem::path shipped_paged_shapes_file(std::string_view model) {
    const std::string name = model == "deepseek" ? "deepseek_v32" : std::string(model);
    const std::optional<std::filesystem::path> configs = tuning::locate_configs_dir();
    MQAJIT_CHECK_KIND(not_found, configs.has_value(), "no shipped configs folder found for the {} decode shapes; give "
                      "a decode shapes CSV instead", model);
    const std::filesystem::path file = *configs / "model_configs" / fmt::format("paged_mqa_logits_untuned_{}.csv", name);
    MQAJIT_CHECK_KIND(not_found, std::filesystem::exists(file), "{} not found: the shipped decode shapes are glm5 and "
                      "deepseek (or give a CSV)", file.string());
    return file;
}

std::vector<int> default_decode_contexts(std::int64_t batch) {
    std::vector<int> contexts;
    for (int context : {4096, 32768, 131072})
        if (batch * context <= kMaxDefaultTokens) contexts.push_back(context);
    if (contexts.empty()) contexts.push_back(static_cast<int>(std::max<std::int64_t>(1, kMaxDefaultTokens / batch)));
    return contexts;
}

std::vector<int> parse_positive_list(std::string_view option, std::string_view text) {
    return split_positive(option, text, ',');
}

std::vector<PagedBenchShape> paged_shapes_from_lists(const std::vector<int>& batches, const std::vector<int>& next_ns,
                                                     const std::vector<int>& heads, int head_dim, int block_kv,
                                                     const std::vector<int>& contexts) {
    std::vector<PagedBenchShape> shapes;
    for (int batch : batches)
        for (int next_n : next_ns)
            for (int h : heads)
                shapes.push_back({.batch = batch, .next_n = next_n, .heads = h, .head_dim = head_dim,
                                  .block_kv = block_kv, .contexts = contexts});
    return shapes;
}

std::string paged_shape_label(const PagedBenchShape& s) {
    std::string label = fmt::format("B={} next_n={} H={} D={} block_kv={}", s.batch, s.next_n, s.heads, s.head_dim,
                                    s.block_kv);
    if (s.clean_logits) label += fmt::format(" clean_logits={}", *s.clean_logits);
    return label;
}

std::string contexts_field(const std::vector<int>& contexts) { return fmt::format("{}", fmt::join(contexts, ";")); }

}  // namespace mqajit::tools
