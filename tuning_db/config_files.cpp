#include "tuning_db/config_files.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace mqajit::tuning {

template <class Key>
std::string CollisionOf<Key>::message() const {
    return fmt::format("{}: {} says {}, {} says {}; using {} (later in sorted path order)", to_string(key),
                       dropped.origin, dropped.choice(), kept.origin, kept.choice(), kept.origin);
}

std::vector<std::filesystem::path> sorted_config_order(std::vector<std::filesystem::path> files) {
    auto by_path = [](const std::filesystem::path& a, const std::filesystem::path& b) {
        return a.generic_string() < b.generic_string();
    };
    std::ranges::sort(files, by_path);
    auto same = [](const std::filesystem::path& a, const std::filesystem::path& b) {
        return a.generic_string() == b.generic_string();
    };
    files.erase(std::unique(files.begin(), files.end(), same), files.end());
    return files;
}

template <class Key>
ConfigRowsOf<Key> merge_tables(const std::vector<CsvRowsOf<Key>>& tables) {
    ConfigRowsOf<Key> merged;
    std::map<Key, TunedRowOf<Key>> by_key;
    for (const CsvRowsOf<Key>& table : tables) {
        merged.problems.insert(merged.problems.end(), table.problems.begin(), table.problems.end());
        for (const TunedRowOf<Key>& row : table.rows) {
            auto [found, inserted] = by_key.try_emplace(row.key, row);
            if (inserted) continue;
            if (!found->second.same_choice(row))
                merged.collisions.push_back({.key = row.key, .kept = row, .dropped = found->second});
            found->second = row;
        }
    }
    merged.rows.reserve(by_key.size());
    for (auto& [key, row] : by_key) merged.rows.push_back(std::move(row));
    return merged;
}

template <class Key>
ConfigRowsOf<Key> load_config_files(const std::vector<std::filesystem::path>& files) {
    const auto ordered = sorted_config_order(files);
    std::vector<CsvRowsOf<Key>> tables;
    tables.reserve(ordered.size());
    for (const auto& file : ordered) tables.push_back(read_csv_file<Key>(file));
    ConfigRowsOf<Key> merged = merge_tables(tables);
    merged.files = ordered;
    return merged;
}

std::string_view config_file_op(const std::filesystem::path& file) {
    // NOTES: one rule, the prefixed names first, so a name two patterns match
    // ("paged_mqa_logits_tuned_x_tuned_mqa_logits.csv") still has exactly one operator.
    const std::string name = file.filename().string();
    if (name.starts_with(PagedShapeKey::kOp.name)) return PagedShapeKey::kOp.name;
    if (name.starts_with(TopkShapeKey::kOp.tuned_prefix)) return TopkShapeKey::kOp.name;
    return ShapeKey::kOp.name;
}

template <class Key>
bool is_tuned_config_name(const std::filesystem::path& file) {
    const std::string name = file.filename().string();
    constexpr std::string_view prefix = Key::kOp.tuned_prefix;
    constexpr std::string_view suffix = Key::kOp.tuned_suffix;
    if (config_file_op(file) != Key::kOp.name || name.size() < prefix.size() + suffix.size() ||
        !name.starts_with(prefix) || !name.ends_with(suffix))
        return false;
    // NOTES: a model's name joins the fixed parts with '_' ("glm5_" + "tuned_mqa_logits.csv",
    // "paged_mqa_logits_tuned" + "_glm5" + ".csv"), so "glm5_untuned_mqa_logits.csv" is no match.
    const std::string_view middle = std::string_view(name).substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (middle.empty()) return true;
    if (!prefix.empty() && !middle.starts_with('_')) return false;
    if (!suffix.starts_with('.') && !middle.ends_with('_')) return false;
    return true;
}

template <class Key>
std::vector<std::filesystem::path> files_of_op(const std::vector<std::filesystem::path>& files) {
    std::vector<std::filesystem::path> kept;
    std::ranges::copy_if(files, std::back_inserter(kept),
                         [](const std::filesystem::path& file) { return config_file_op(file) == Key::kOp.name; });
    return kept;
}

template <class Key>
std::vector<std::filesystem::path> shipped_config_files(const std::filesystem::path& configs_dir) {
    std::vector<std::filesystem::path> files;
    for (const auto& dir : {configs_dir, configs_dir / "model_configs"}) {
        std::error_code error;
        for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
            if (entry.is_regular_file() && is_tuned_config_name<Key>(entry.path())) files.push_back(entry.path());
        }
    }
    return sorted_config_order(std::move(files));
}

#define MQAJIT_CONFIG_FILES_FOR(Key)                                                                        \
    template struct CollisionOf<Key>;                                                                       \
    template ConfigRowsOf<Key> merge_tables(const std::vector<CsvRowsOf<Key>>&);                            \
    template ConfigRowsOf<Key> load_config_files<Key>(const std::vector<std::filesystem::path>&);           \
    template bool is_tuned_config_name<Key>(const std::filesystem::path&);                                  \
    template std::vector<std::filesystem::path> files_of_op<Key>(const std::vector<std::filesystem::path>&); \
    template std::vector<std::filesystem::path> shipped_config_files<Key>(const std::filesystem::path&);
MQAJIT_CONFIG_FILES_FOR(ShapeKey)
MQAJIT_CONFIG_FILES_FOR(PagedShapeKey)
MQAJIT_CONFIG_FILES_FOR(TopkShapeKey)
#undef MQAJIT_CONFIG_FILES_FOR

}  // namespace mqajit::tuning
