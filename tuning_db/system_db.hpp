#pragma once
// The system tuning database: built from the shipped CSVs at build time (`mqajit db build-system`),
// installed read-only, never written at run time. It holds every operator's table.

#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "tuning_db/config_files.hpp"
#include "tuning_db/sqlite.hpp"
#include "tuning_db/tuned_row.hpp"

namespace mqajit::tuning {

class SystemDb {
public:
    // Opens read-only and checks the schema; throws mqajit::Error naming the file when it can't.
    explicit SystemDb(std::filesystem::path path);

    // Rows keep the origin they were built from ("tuning_db/configs/....csv:12").
    template <class Key>
    std::vector<TunedRowOf<Key>> group_rows(const Key& group);
    template <class Key = ShapeKey>
    std::vector<TunedRowOf<Key>> all_rows();
    template <class Key = ShapeKey>
    std::vector<Key> group_keys();  // every group that has rows
    const std::filesystem::path& path() const { return path_; }

private:
    std::mutex mutex_;
    std::filesystem::path path_;
    std::unique_ptr<sqlite::Database> database_;
};

// What build_system_db loaded for each operator's table, with the problems and collisions found.
struct SystemDbBuild {
    ConfigRowsOf<ShapeKey> mqa_logits;
    ConfigRowsOf<PagedShapeKey> paged_mqa_logits;
    ConfigRowsOf<TopkShapeKey> mqa_topk;

    template <class Key>
    const ConfigRowsOf<Key>& of() const {
        if constexpr (std::is_same_v<Key, ShapeKey>) return mqa_logits;
        else if constexpr (std::is_same_v<Key, PagedShapeKey>) return paged_mqa_logits;
        else return mqa_topk;
    }
};

// Loads `csv_files`, each into the table of the operator its name says (config_file_op; see
// load_config_files: sorted order, later wins a collision), writes them to a new database beside
// `out` and renames it into place. Returns what was loaded, for the caller to report.
SystemDbBuild build_system_db(const std::filesystem::path& out, const std::vector<std::filesystem::path>& csv_files);

}  // namespace mqajit::tuning
