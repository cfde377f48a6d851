#include "tools/common/tune_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <type_traits>

#include "core/check.hpp"
#include "core/files.hpp"
#include "tools/common/json_fields.hpp"
#include "tools/common/tune_workers_plan.hpp"

namespace mqajit::tools {
namespace {

nlohmann::json candidate_json(const CandidateResult& c) {
    nlohmann::json out = {{"kernel", c.kernel}, {"verified", c.verified}};
    if (!c.verified) {
        out["rejected"] = c.problem;
        return out;
    }
    out["pruned"] = c.pruned;
    out["median_us"] = c.median_us;
    out["runs"] = c.runs;
    return out;
}

// Why the row's kernel won: the fastest, or the baseline kept over a faster variant within the
// tuner's min_gain of it.
std::string choice_reason(const std::vector<CandidateResult>& candidates, const std::string& chosen,
                          const char* fastest) {
    const auto baseline = std::find_if(candidates.begin(), candidates.end(),
                                       [](const CandidateResult& c) { return c.kernel == "baseline"; });
    if (chosen != "baseline" || baseline == candidates.end()) return fastest;
    const bool variant_faster = std::any_of(candidates.begin(), candidates.end(), [&](const CandidateResult& c) {
        return c.verified && !c.pruned && c.kernel != "baseline" && c.median_us < baseline->median_us;
    });
    return variant_faster ? "baseline kept: the fastest variant was within min_gain of it" : fastest;
}

}  // namespace

template <class Key>
Key tune_json_key(const nlohmann::json& row, const std::string& what) {
    Key key;
    key.visit([&](std::string_view column, auto& value) {
        using T = std::remove_reference_t<decltype(value)>;
        const std::string name(column);
        if constexpr (std::is_same_v<T, std::string>) {
            const auto found = row.find(name);
            MQAJIT_CHECK(found == row.end() || found->is_string(), "{}: '{}' is {}; it must be a string", what, name,
                         found == row.end() ? "" : found->dump());
            value = found == row.end() ? std::string() : found->template get<std::string>();
        } else {
            const T fallback = column == "clean_logits" ? static_cast<T>(Key::kOp.mode_without_column.value_or(0)) : T{};
            value = json_whole_member<T>(row, name.c_str(), fallback, what);
        }
    });
    return key;
}

template ShapeKey tune_json_key<ShapeKey>(const nlohmann::json&, const std::string&);
template PagedShapeKey tune_json_key<PagedShapeKey>(const nlohmann::json&, const std::string&);
template TopkShapeKey tune_json_key<TopkShapeKey>(const nlohmann::json&, const std::string&);

nlohmann::json tune_json_row(const ShapeResult& result, const TuneSettings& settings) {
    const TunedRow& row = result.row;
    nlohmann::json variants = nlohmann::json::object();
    nlohmann::json pruned = nlohmann::json::array();
    nlohmann::json candidates = nlohmann::json::array();
    int winner_runs = 0;
    for (const CandidateResult& c : result.candidates) {
        candidates.push_back(candidate_json(c));
        if (c.kernel == row.variant) winner_runs = c.runs;
        if (!c.verified || c.kernel == "baseline") continue;
        variants[c.kernel] = c.median_us;
        if (c.pruned) pruned.push_back(c.kernel);
    }
    nlohmann::json out = {{"tool", "mqajit tune"}, {"arch", row.key.arch}, {"cu_num", row.key.cu_num},
                          {"heads", row.key.heads}, {"head_dim", row.key.head_dim},
                          {"clean_logits", row.key.clean_logits}, {"logits_dtype", row.key.logits_dtype},
                          {"seq_len", row.key.seq_len},
                          {"seq_len_kv", row.key.seq_len_kv}, {"kernel", row.variant},
                          {"reason", choice_reason(result.candidates, row.variant, "fastest verified candidate")}, {"us", row.us}, {"flops", result.flops},
                          {"tflops", row.us > 0 ? result.flops / row.us * 1e-6 : 0.0}, {"runs", winner_runs},
                          {"variants_us", variants}, {"pruned", pruned}, {"prune_factor", settings.prune_factor},
                          {"min_gain", settings.min_gain}, {"probe_runs", kProbeRuns}, {"candidates", candidates}};
    // NOTES: a baseline that failed its check has no time; the report then refuses the row by name.
    if (row.baseline_us) out["baseline_us"] = *row.baseline_us;
    return out;
}

nlohmann::json paged_tune_json_row(const PagedShapeResult& result, const TuneSettings& settings) {
    const PagedTunedRow& row = result.row;
    nlohmann::json candidates = nlohmann::json::array();
    for (const CandidateResult& c : result.candidates) {
        nlohmann::json out = candidate_json(c);
        if (const auto it = result.context_us.find(c.kernel); it != result.context_us.end()) out["context_us"] = it->second;
        candidates.push_back(out);
    }
    nlohmann::json out = {{"tool", "mqajit tune"}, {"op", PagedShapeKey::kOp.name}};
    row.key.visit([&](std::string_view column, const auto& value) { out[std::string(column)] = value; });
    out.update({{"contexts", result.contexts}, {"floor_bytes", result.floor_bytes}, {"kernel", row.variant},
                {"reason", choice_reason(result.candidates, row.variant,
                                         "fastest verified candidate (geometric mean over the contexts)")},
                {"us", row.us}, {"prune_factor", settings.prune_factor}, {"min_gain", settings.min_gain},
                {"probe_runs", kProbeRuns}, {"candidates", candidates}});
    if (row.baseline_us) out["baseline_us"] = *row.baseline_us;
    return out;
}

nlohmann::json topk_tune_json_row(const TopkShapeResult& result, const TuneSettings& settings) {
    const TopkTunedRow& row = result.row;
    nlohmann::json candidates = nlohmann::json::array();
    for (const CandidateResult& c : result.candidates) candidates.push_back(candidate_json(c));
    nlohmann::json out = {{"tool", "mqajit tune"}, {"op", TopkShapeKey::kOp.name}};
    row.key.visit([&](std::string_view column, const auto& value) { out[std::string(column)] = value; });
    out.update({{"kernel", row.variant},
                {"reason", choice_reason(result.candidates, row.variant, "fastest verified candidate")},
                {"us", row.us}, {"prune_factor", settings.prune_factor}, {"min_gain", settings.min_gain},
                {"probe_runs", kProbeRuns}, {"candidates", candidates}});
    if (row.baseline_us) out["baseline_us"] = *row.baseline_us;
    return out;
}

nlohmann::json read_tune_json(const std::filesystem::path& path) {
    std::error_code error;
    if (!std::filesystem::exists(path, error)) return nlohmann::json::array();
    const std::string text = read_regular_file(path, "tune JSON file");
    nlohmann::json rows;
    try {
        rows = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        MQAJIT_FAIL(invalid_argument, "{} is not JSON ({}); move it away or give another --json-file", path.string(),
                    e.what());
    }
    MQAJIT_CHECK(rows.is_array(), "{} holds no array of rows; move it away or give another --json-file",
                 path.string());
    for (const nlohmann::json& row : rows)
        MQAJIT_CHECK(row.is_object(), "{} holds a row that is not an object: {}", path.string(), row.dump());
    return rows;
}

void write_tune_json(const std::filesystem::path& path, const nlohmann::json& rows) {
    // NOTES: written whole beside the target under a unique name and renamed, so an interrupt never
    // leaves half a file and two writers never share one.
    write_file_atomically(path, rows.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

template <class Key>
nlohmann::json merge_tune_json(const nlohmann::json& base, const nlohmann::json& updates) {
    nlohmann::json merged = nlohmann::json::array();
    std::map<Key, std::size_t> index_of;
    for (const nlohmann::json* rows : {&base, &updates}) {
        for (const nlohmann::json& row : *rows) {
            const auto [it, inserted] = index_of.emplace(tune_json_key<Key>(row, "a tune JSON row"), merged.size());
            if (inserted)
                merged.push_back(row);
            else
                merged[it->second] = row;
        }
    }
    return merged;
}
template nlohmann::json merge_tune_json<ShapeKey>(const nlohmann::json&, const nlohmann::json&);
template nlohmann::json merge_tune_json<PagedShapeKey>(const nlohmann::json&, const nlohmann::json&);
template nlohmann::json merge_tune_json<TopkShapeKey>(const nlohmann::json&, const nlohmann::json&);

nlohmann::json tune_json_for_shapes(const nlohmann::json& rows, const std::vector<BenchShape>& shapes) {
    nlohmann::json picked = nlohmann::json::array();
    for (const BenchShape& s : shapes) {
        for (auto row = rows.rbegin(); row != rows.rend(); ++row) {
            if (!tunes_shape(tune_json_key<ShapeKey>(*row, "a tune JSON row"), s)) continue;
            picked.push_back(*row);
            break;
        }
    }
    return picked;
}

std::size_t merge_tune_json_parts(const std::filesystem::path& file, const std::vector<std::filesystem::path>& parts,
                                  const std::vector<BenchShape>& shapes) {
    nlohmann::json finished = nlohmann::json::array();
    for (const std::filesystem::path& part : parts) {
        for (const nlohmann::json& row : read_tune_json(part)) finished.push_back(row);
    }
    const nlohmann::json updates = tune_json_for_shapes(finished, shapes);
    if (!updates.empty()) write_tune_json(file, merge_tune_json(read_tune_json(file), updates));
    return updates.size();
}

}  // namespace mqajit::tools
