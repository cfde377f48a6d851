#pragma once
// The system tuning database: built from the shipped CSVs at build time (`mqajit db build-system`),
// installed read-only, never written at run time.

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
    std::vector<TunedRow> group_rows(const GroupKeyView& group);
    std::vector<TunedRow> all_rows();
    std::vector<ShapeKey> group_keys();  // every group that has rows
    const std::filesystem::path& path() const { return path_; }

private:
    std::mutex mutex_;
    std::filesystem::path path_;
    std::unique_ptr<sqlite::Database> database_;
};

// Loads `csv_files` (see load_config_files: sorted order, later wins a collision), writes them to
// a new database beside `out` and renames it into place. Returns what was loaded, with the
// problems and collisions found, for the caller to report.
ConfigRows build_system_db(const std::filesystem::path& out, const std::vector<std::filesystem::path>& csv_files);

}  // namespace mqajit::tuning
