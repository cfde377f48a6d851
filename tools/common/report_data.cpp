#include "tools/common/report_data.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <set>

#include "core/check.hpp"
#include "core/files.hpp"
#include "tools/common/json_fields.hpp"
#include "tuning_db/csv.hpp"
#include "variants/arch.hpp"

namespace mqajit::tools {
namespace {

std::string describe(const ShapeKey& group) {
    return fmt::format("--arch {} --cu-num {} --heads {} --head-dim {} --clean-logits {} --logits-dtype {}",
                       group.arch, group.cu_num, group.heads, group.head_dim, group.clean_logits, group.logits_dtype);
}

bool matches(const ShapeKey& key, const GroupFilter& filter, const std::optional<std::string>& arch) {
    return (!arch || key.arch == *arch) && (!filter.cu_num || key.cu_num == *filter.cu_num) &&
           (!filter.heads || key.heads == *filter.heads) && (!filter.head_dim || key.head_dim == *filter.head_dim) &&
           (!filter.clean_logits || key.clean_logits == *filter.clean_logits) &&
           (!filter.logits_dtype || key.logits_dtype == *filter.logits_dtype);
}

// A member of a bench row: `what` names the file and row for the message.
const nlohmann::json& member(const nlohmann::json& row, const char* name, const std::string& what) {
    const auto it = row.find(name);
    MQAJIT_CHECK(it != row.end(), "{} has no '{}'; write the file with `mqajit bench --variant all --json-file`", what,
                 name);
    return *it;
}

double positive_number(const nlohmann::json& value, const char* name, const std::string& what) {
    MQAJIT_CHECK(value.is_number() && value.get<double>() > 0, "{}: '{}' is {}; it must be a positive number", what,
                 name, value.dump());
    return value.get<double>();
}

BenchRow parse_bench_row(const nlohmann::json& item, const std::string& what) {
    BenchRow row;
    row.arch = item.contains("arch") ? Arch::parse(item["arch"].get<std::string>()).name : "";
    row.cu_num = json_whole_member(item, "cu_num", 0, what);
    row.heads = json_whole_number<int>(member(item, "heads", what), "heads", what);
    row.head_dim = json_whole_number<int>(member(item, "head_dim", what), "head_dim", what);
    row.seq_len = json_whole_number<std::int64_t>(member(item, "seq_len", what), "seq_len", what);
    row.seq_len_kv = json_whole_number<std::int64_t>(member(item, "seq_len_kv", what), "seq_len_kv", what);
    row.clean_logits = json_whole_member(item, "clean_logits", kCleanLogitsWithoutColumn, what);
    MQAJIT_CHECK(row.clean_logits == 0 || row.clean_logits == 1, "{}: 'clean_logits' is {}; it must be 0 or 1", what,
                 row.clean_logits);
    if (item.contains("logits_dtype")) {
        const nlohmann::json& dtype = item["logits_dtype"];
        MQAJIT_CHECK(dtype == "float32" || dtype == "bfloat16", "{}: 'logits_dtype' is {}; it must be \"float32\" or "
                     "\"bfloat16\"", what, dtype.dump());
        row.logits_dtype = dtype.get<std::string>();
    }
    row.baseline_us = positive_number(member(item, "baseline_us", what), "baseline_us", what);
    if (item.contains("flops")) {
        row.flops = positive_number(item["flops"], "flops", what);
    } else {
        // NOTES: files written before bench recorded "flops" still give it as TFLOP/s x us.
        row.flops = positive_number(member(item, "tflops", what), "tflops", what) *
                    positive_number(member(item, "us", what), "us", what) * 1e6;
    }
    const nlohmann::json& variants = member(item, "variants_us", what);
    MQAJIT_CHECK(variants.is_object(), "{}: 'variants_us' must map variant names to microseconds", what);
    for (const auto& [name, us] : variants.items())
        row.variants_us[name] = positive_number(us, name.c_str(), what);
    row.from_tuner = item.value("tool", std::string()) == "mqajit tune";
    if (item.contains("pruned")) {
        MQAJIT_CHECK(item["pruned"].is_array(), "{}: 'pruned' must list variant names", what);
        for (const nlohmann::json& name : item["pruned"]) {
            MQAJIT_CHECK(variants.contains(name.get<std::string>()), "{}: pruned variant {} has no time in 'variants_us'",
                         what, name.dump());
            row.probe_only.insert(name.get<std::string>());
        }
    }
    return row;
}

}  // namespace

TunedTable load_tuned_table(const std::filesystem::path& csv, const GroupFilter& filter) {
    MQAJIT_CHECK_KIND(not_found, std::filesystem::is_regular_file(csv), "tuned table {} does not exist", csv.string());
    const tuning::CsvRows table = tuning::read_csv_file(csv);
    const std::optional<std::string> arch =
        filter.arch ? std::optional<std::string>(Arch::parse(*filter.arch).name) : std::nullopt;

    std::set<ShapeKey> all_groups, matching_groups;
    for (const TunedRow& row : table.rows) {
        all_groups.insert(group_of(row.key));
        if (matches(row.key, filter, arch)) matching_groups.insert(group_of(row.key));
    }
    std::vector<std::string> listed;
    for (const ShapeKey& g : all_groups) listed.push_back(describe(g));
    MQAJIT_CHECK(!all_groups.empty(), "{} has no usable rows", csv.string());
    MQAJIT_CHECK(!matching_groups.empty(), "{} has no rows for{}{}{}{}{}{}; it has: {}", csv.string(),
                 arch ? " arch " + *arch : "", filter.cu_num ? fmt::format(" cu_num {}", *filter.cu_num) : "",
                 filter.heads ? fmt::format(" heads {}", *filter.heads) : "",
                 filter.head_dim ? fmt::format(" head_dim {}", *filter.head_dim) : "",
                 filter.clean_logits ? fmt::format(" clean_logits {}", *filter.clean_logits) : "",
                 filter.logits_dtype ? " logits_dtype " + *filter.logits_dtype : "",
                 fmt::join(listed, "; "));
    if (matching_groups.size() > 1) {
        std::vector<std::string> candidates;
        for (const ShapeKey& g : matching_groups) candidates.push_back(describe(g));
        MQAJIT_FAIL(invalid_argument, "{} holds {} tables; pick one with {}", csv.string(), matching_groups.size(),
                    fmt::join(candidates, " or "));
    }

    TunedTable result{.source = csv, .group = *matching_groups.begin()};
    for (const TunedRow& row : table.rows) {
        if (group_of(row.key) == result.group) result.rows.push_back(row);
    }
    for (const tuning::RowProblem& problem : table.problems)
        result.skipped.push_back(fmt::format("{}: {}", problem.place, problem.message));
    return result;
}

std::optional<double> BenchRow::time_of(const std::string& kernel) const {
    if (kernel == "baseline") return baseline_us;
    const auto it = variants_us.find(kernel);
    if (it == variants_us.end()) return std::nullopt;
    return it->second;
}

nlohmann::json read_report_json(const std::filesystem::path& json) {
    std::error_code error;
    MQAJIT_CHECK_KIND(not_found, std::filesystem::exists(json, error), "bench file {} does not exist", json.string());
    const std::string text = read_regular_file(json, "bench file");
    nlohmann::json document;
    try {
        document = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        MQAJIT_FAIL(invalid_argument, "{} is not JSON ({}); give the file `mqajit bench --json-file` wrote",
                    json.string(), e.what());
    }
    MQAJIT_CHECK(document.is_array(), "{} must hold an array of bench rows", json.string());
    for (std::size_t i = 0; i < document.size(); ++i)
        MQAJIT_CHECK(document[i].is_object(), "{} row {} is not an object", json.string(), i);
    return document;
}

ReportOp report_json_op(const nlohmann::json& rows, const std::filesystem::path& json) {
    std::optional<std::size_t> prefill_row, decode_row;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const nlohmann::json& field = rows[i].contains("op") ? rows[i]["op"] : nlohmann::json(ShapeKey::kOp.name);
        MQAJIT_CHECK(field.is_string(), "{} row {}: 'op' is {}, not a string; it must be {} or {}", json.string(), i,
                     field.dump(), ShapeKey::kOp.name, PagedShapeKey::kOp.name);
        const std::string op = field.get<std::string>();
        MQAJIT_CHECK(op == ShapeKey::kOp.name || op == PagedShapeKey::kOp.name, "{} row {}: 'op' is '{}'; it must be "
                     "{} or {}", json.string(), i, op, ShapeKey::kOp.name, PagedShapeKey::kOp.name);
        (op == ShapeKey::kOp.name ? prefill_row : decode_row) = i;
    }
    MQAJIT_CHECK(!prefill_row || !decode_row, "{} holds both {} (prefill, row {}) and {} (decode, row {}) rows; a "
                 "report covers one operator: give each its own file", json.string(), ShapeKey::kOp.name,
                 *prefill_row, PagedShapeKey::kOp.name, *decode_row);
    return decode_row ? ReportOp::decode : ReportOp::prefill;
}

ReportOp tuned_csv_op(const std::filesystem::path& csv) {
    MQAJIT_CHECK_KIND(not_found, std::filesystem::is_regular_file(csv), "tuned table {} does not exist", csv.string());
    const std::string text = read_regular_file(csv, "tuned table");
    const std::vector<std::string_view> lines = text_lines(text);
    const std::string_view header = lines.empty() ? std::string_view() : lines.front();
    bool next_n = false, batch = false;
    for (const std::string& column : tuning::split_csv_line(header)) {
        next_n = next_n || column == "next_n";
        batch = batch || column == "batch";
    }
    return next_n && batch ? ReportOp::decode : ReportOp::prefill;
}

std::vector<BenchRow> read_bench_json(const std::filesystem::path& json) {
    const nlohmann::json document = read_report_json(json);
    MQAJIT_CHECK(report_json_op(document, json) == ReportOp::prefill, "{} holds {} (decode) rows; read it with a "
                 "decode tuned table or alone (`mqajit report --bench FILE --markdown`)", json.string(),
                 PagedShapeKey::kOp.name);
    std::vector<BenchRow> rows;
    for (std::size_t i = 0; i < document.size(); ++i) {
        const nlohmann::json& item = document[i];
        const std::string what = fmt::format("{} row {}", json.string(), i);
        try {
            rows.push_back(parse_bench_row(item, what));
        } catch (const nlohmann::json::exception& e) {
            MQAJIT_FAIL(invalid_argument, "{}: {}", what, e.what());
        }
    }
    return rows;
}

}  // namespace mqajit::tools
