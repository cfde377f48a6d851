#include "tools/common/tune_workers_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "core/check.hpp"
#include "core/settings.hpp"
#include "variants/arch.hpp"

namespace mqajit::tools {
namespace {

std::vector<std::string> split_commas(std::string_view text) {
    std::vector<std::string> parts;
    std::size_t begin = 0;
    for (;;) {
        const std::size_t end = text.find(',', begin);
        std::string part(text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
        part.erase(0, part.find_first_not_of(' '));
        part.erase(part.find_last_not_of(' ') + 1);
        parts.push_back(std::move(part));
        if (end == std::string_view::npos) return parts;
        begin = end + 1;
    }
}

}  // namespace

std::vector<int> parse_device_list(std::string_view text) {
    std::vector<int> devices;
    std::set<int> seen;
    for (const std::string& part : split_commas(text)) {
        MQAJIT_CHECK(!part.empty(), "--devices '{}': give GPU ordinals separated by commas, e.g. 0,1,2,3", text);
        const auto ordinal = parse_int(fmt::format("--devices '{}'", text), part);
        MQAJIT_CHECK(ordinal >= 0 && ordinal < 1024, "--devices '{}': {} is not a GPU ordinal", text, ordinal);
        MQAJIT_CHECK(seen.insert(static_cast<int>(ordinal)).second, "--devices '{}' names GPU {} twice", text, ordinal);
        devices.push_back(static_cast<int>(ordinal));
    }
    return devices;
}

std::vector<std::vector<BenchShape>> split_round_robin(const std::vector<BenchShape>& shapes, std::size_t num_workers) {
    MQAJIT_CHECK_KIND(internal, num_workers > 0, "split_round_robin needs at least one worker");
    std::vector<std::vector<BenchShape>> parts(num_workers);
    for (std::size_t i = 0; i < shapes.size(); ++i) parts[i % num_workers].push_back(shapes[i]);
    return parts;
}

void write_shapes_csv(const std::filesystem::path& path, const std::vector<BenchShape>& shapes) {
    std::ofstream file(path, std::ios::binary);
    file << "gfx,cu_num,heads,head_dim,clean_logits,logits_dtype,seq_len,seq_len_kv\n";
    for (const BenchShape& s : shapes) {
        file << fmt::format("{},{},{},{},{},{},{},{}\n", s.arch, s.cu_num, s.heads, s.head_dim,
                            s.clean_logits ? std::to_string(*s.clean_logits) : "", s.logits_dtype, s.seq_len,
                            s.seq_len_kv);
    }
    file.close();
    MQAJIT_CHECK_KIND(io, file.good(), "could not write the worker's shape file {}", path.string());
}

bool tunes_shape(const ShapeKey& k, const BenchShape& s) {
    return k.heads == s.heads && k.head_dim == s.head_dim && k.seq_len == s.seq_len && k.seq_len_kv == s.seq_len_kv &&
           (s.arch.empty() || k.arch == Arch::parse(s.arch).name) && (s.cu_num == 0 || k.cu_num == s.cu_num) &&
           (!s.clean_logits || k.clean_logits == *s.clean_logits) && k.logits_dtype == s.logits_dtype;
}

std::vector<TunedRow> rows_for_shapes(const std::vector<TunedRow>& rows, const std::vector<BenchShape>& shapes) {
    std::vector<TunedRow> picked;
    for (const BenchShape& s : shapes) {
        const auto last =
            std::find_if(rows.rbegin(), rows.rend(), [&](const TunedRow& row) { return tunes_shape(row.key, s); });
        if (last != rows.rend()) picked.push_back(*last);
    }
    return picked;
}

std::string worker_visible_devices(int ordinal, const std::optional<std::string>& inherited) {
    if (!inherited) return std::to_string(ordinal);
    const std::vector<std::string> visible = split_commas(*inherited);
    MQAJIT_CHECK(static_cast<std::size_t>(ordinal) < visible.size() && !visible[ordinal].empty(),
                 "--devices names GPU {}, but CUDA_VISIBLE_DEVICES={} shows this process only {} GPU(s); count "
                 "ordinals within that list",
                 ordinal, *inherited, visible.size());
    return visible[ordinal];
}

}  // namespace mqajit::tools
