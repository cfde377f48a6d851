#include "tools/common/report_paged_data.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>

#include "core/check.hpp"
#include "tools/common/json_fields.hpp"
#include "tools/common/report_compare.hpp"  // geometric_mean
#include "tools/common/tune_json.hpp"
#include "tuning_db/csv.hpp"
#include "variants/arch.hpp"

namespace mqajit::tools {
namespace {

// One decode shape's times in the JSON: per context, each kernel's median ("baseline" included).
struct ShapeTimes {
    std::map<int, std::map<std::string, double>> at_context{};
    std::set<std::string> chosen{};  // the kernel(s) the run chose (tune: one; bench: one per context)
    std::optional<double> us{}, baseline_us{};  // the tuner's geometric means
};

struct JsonTimes {
    std::vector<PagedShapeKey> order{};  // first appearance
    std::map<PagedShapeKey, ShapeTimes> of{};
    bool from_tuner = false;
};

double positive(const nlohmann::json& value, const std::string& name, const std::string& what) {
    MQAJIT_CHECK(value.is_number() && value.get<double>() > 0, "{}: '{}' is {}; it must be a positive number", what,
                 name, value.dump());
    return value.get<double>();
}

PagedShapeKey checked_key(const nlohmann::json& row, const std::string& what) {
    PagedShapeKey key = tune_json_key<PagedShapeKey>(row, what);
    MQAJIT_CHECK(key.batch > 0 && key.next_n > 0 && key.heads > 0 && key.head_dim > 0,
                 "{}: a decode row needs positive 'batch', 'next_n', 'heads' and 'head_dim'", what);
    if (!key.arch.empty()) key.arch = Arch::parse(key.arch).name;
    return key;
}

// A `mqajit tune --op paged_mqa_logits --json-file` row: candidates with `context_us` per context.
void add_tune_row(const nlohmann::json& row, const std::string& what, ShapeTimes& times) {
    const nlohmann::json contexts = row.value("contexts", nlohmann::json::array());
    MQAJIT_CHECK(contexts.is_array(), "{}: 'contexts' must list the contexts timed", what);
    for (const nlohmann::json& candidate : row.value("candidates", nlohmann::json::array())) {
        const auto medians = candidate.find("context_us");
        if (!candidate.value("verified", false) || medians == candidate.end()) continue;
        const std::string kernel = candidate.value("kernel", std::string());
        MQAJIT_CHECK(medians->is_array() && medians->size() == contexts.size(), "{}: candidate {}'s 'context_us' "
                     "must give one median per context ({})", what, kernel, contexts.size());
        for (std::size_t i = 0; i < contexts.size(); ++i) {
            const int context = json_whole_number<int>(contexts[i], "contexts", what);
            times.at_context[context][kernel] = positive((*medians)[i], "context_us", what);
        }
    }
    times.chosen = {row.value("kernel", std::string())};
    times.us = positive(row.at("us"), "us", what);
    if (row.contains("baseline_us")) times.baseline_us = positive(row["baseline_us"], "baseline_us", what);
}

// A `mqajit bench --op paged_mqa_logits --json-file` row: one context, the kernels it timed.
void add_bench_row(const nlohmann::json& row, const std::string& what, ShapeTimes& times) {
    const int context = json_whole_number<int>(row.at("context_len"), "context_len", what);
    std::map<std::string, double>& at = times.at_context[context];
    for (const auto& [name, us] : row.value("variants_us", nlohmann::json::object()).items())
        at[name] = positive(us, name, what);
    const std::string kernel = row.value("kernel", std::string());
    if (row.contains("us")) at[kernel] = positive(row["us"], "us", what);
    if (row.contains("baseline_us")) at["baseline"] = positive(row["baseline_us"], "baseline_us", what);
    times.chosen.insert(kernel);
}

JsonTimes read_json_times(const std::filesystem::path& json) {
    const nlohmann::json rows = read_report_json(json);
    MQAJIT_CHECK(report_json_op(rows, json) == ReportOp::decode, "{} holds no {} rows", json.string(),
                 PagedShapeKey::kOp.name);
    JsonTimes result;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::string what = fmt::format("{} row {}", json.string(), i);
        try {
            const PagedShapeKey key = checked_key(rows[i], what);
            const bool from_tuner = rows[i].value("tool", std::string()) == "mqajit tune";
            MQAJIT_CHECK(i == 0 || from_tuner == result.from_tuner, "{}: the file mixes `mqajit tune` and `mqajit "
                         "bench` rows; give one run's file", what);
            result.from_tuner = from_tuner;
            auto [it, inserted] = result.of.try_emplace(key);
            if (inserted) result.order.push_back(key);
            // NOTES: a tune file's later row of a shape replaces the earlier (as a rerun does).
            if (from_tuner) it->second = ShapeTimes{};
            (from_tuner ? add_tune_row : add_bench_row)(rows[i], what, it->second);
        } catch (const nlohmann::json::exception& e) {
            MQAJIT_FAIL(invalid_argument, "{}: {}", what, e.what());
        }
    }
    return result;
}

// The medians of `kernel` per context of `times`, and their geometric mean when it was timed at all.
void fill_times(const ShapeTimes& times, const std::string& kernel, std::vector<int>& contexts,
                std::vector<std::optional<double>>& per_context, std::optional<double>& mean) {
    contexts.clear();
    per_context.clear();
    std::vector<double> found;
    for (const auto& [context, kernels] : times.at_context) {
        contexts.push_back(context);
        const auto it = kernels.find(kernel);
        per_context.push_back(it == kernels.end() ? std::nullopt : std::optional<double>(it->second));
        if (it != kernels.end()) found.push_back(it->second);
    }
    mean = !found.empty() && found.size() == per_context.size() ? std::optional<double>(geometric_mean(found))
                                                                 : std::nullopt;
}

PagedReportRow row_from_times(const PagedShapeKey& key, const std::string& kernel, const ShapeTimes& times) {
    PagedReportRow row{.key = key, .kernel = kernel};
    fill_times(times, kernel, row.contexts, row.context_us, row.us);
    std::vector<int> contexts;
    fill_times(times, "baseline", contexts, row.baseline_context_us, row.baseline_us);
    return row;
}

bool matches(const PagedShapeKey& key, const GroupFilter& filter) {
    return (!filter.arch || key.arch == Arch::parse(*filter.arch).name) &&
           (!filter.cu_num || key.cu_num == *filter.cu_num) && (!filter.heads || key.heads == *filter.heads) &&
           (!filter.head_dim || key.head_dim == *filter.head_dim) &&
           (!filter.clean_logits || key.clean_logits == *filter.clean_logits);
}

}  // namespace

PagedReport load_paged_report(const std::filesystem::path& tuned_csv, const std::filesystem::path& json,
                              const GroupFilter& filter) {
    MQAJIT_CHECK(!tuned_csv.empty() || !json.empty(), "a decode report needs --tuned FILE.csv and/or --bench FILE.json");
    PagedReport report;
    const JsonTimes times = json.empty() ? JsonTimes{} : read_json_times(json);
    report.from_tuner = times.from_tuner;
    if (!tuned_csv.empty()) {
        const auto table = tuning::read_csv_file<PagedShapeKey>(tuned_csv);
        for (const tuning::RowProblem& problem : table.problems)
            report.skipped.push_back(fmt::format("{}: {}", problem.place, problem.message));
        for (const PagedTunedRow& tuned : table.rows) {
            if (!matches(tuned.key, filter)) continue;
            if (json.empty()) {
                report.rows.push_back({.key = tuned.key, .kernel = tuned.variant, .us = tuned.us,
                                       .baseline_us = tuned.baseline_us});
                continue;
            }
            const auto it = times.of.find(tuned.key);
            report.rows.push_back(it == times.of.end() ? PagedReportRow{.key = tuned.key, .kernel = tuned.variant}
                                                       : row_from_times(tuned.key, tuned.variant, it->second));
        }
    } else {
        for (const PagedShapeKey& key : times.order) {
            if (!matches(key, filter)) continue;
            const ShapeTimes& shape = times.of.at(key);
            MQAJIT_CHECK(shape.chosen.size() == 1, "{}: B={} next_n={} H={} ran {} kernels over its contexts ({}); "
                         "give --tuned the decode table to say which is the tuned choice", json.string(), key.batch,
                         key.next_n, key.heads, shape.chosen.size(), fmt::join(shape.chosen, ", "));
            PagedReportRow row = row_from_times(key, *shape.chosen.begin(), shape);
            // NOTES: the tuner's own means, which also stand where a context's median is missing.
            if (shape.us) row.us = shape.us;
            if (shape.baseline_us) row.baseline_us = shape.baseline_us;
            report.rows.push_back(std::move(row));
        }
    }
    MQAJIT_CHECK(!report.rows.empty(), "no decode rows{} in {}{}{}", filter.arch || filter.cu_num || filter.heads ||
                 filter.head_dim || filter.clean_logits ? " match the filter" : "", tuned_csv.string(),
                 !tuned_csv.empty() && !json.empty() ? " and " : "", json.string());
    return report;
}

}  // namespace mqajit::tools
