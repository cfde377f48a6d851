#include "tuning_db/config_files.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace mqajit::tuning {

std::string Collision::message() const {
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

ConfigRows merge_tables(const std::vector<CsvRows>& tables) {
    ConfigRows merged;
    std::map<ShapeKey, TunedRow> by_key;
    for (const CsvRows& table : tables) {
        merged.problems.insert(merged.problems.end(), table.problems.begin(), table.problems.end());
        for (const TunedRow& row : table.rows) {
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

ConfigRows load_config_files(const std::vector<std::filesystem::path>& files) {
    const auto ordered = sorted_config_order(files);
    std::vector<CsvRows> tables;
    tables.reserve(ordered.size());
    for (const auto& file : ordered) tables.push_back(read_csv_file(file));
    ConfigRows merged = merge_tables(tables);
    merged.files = ordered;
    return merged;
}

std::vector<std::filesystem::path> shipped_config_files(const std::filesystem::path& configs_dir) {
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_regular_file(configs_dir / "tuned_mqa_logits.csv"))
        files.push_back(configs_dir / "tuned_mqa_logits.csv");
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(configs_dir / "model_configs", error)) {
        const std::string name = entry.path().filename().string();
        if (entry.is_regular_file() && name.ends_with("_tuned_mqa_logits.csv")) files.push_back(entry.path());
    }
    return sorted_config_order(std::move(files));
}

}  // namespace mqajit::tuning
