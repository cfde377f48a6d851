#include "tuning_db/system_db.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.hpp"
#include "core/files.hpp"
#include "mqajit/version.hpp"
#include "tuning_db/row_table.hpp"

namespace mqajit::tuning {

SystemDb::SystemDb(std::filesystem::path path) : path_(std::move(path)) {
    std::error_code error;
    MQAJIT_CHECK_KIND(not_found, std::filesystem::is_regular_file(path_, error),
                      "system tuning database {} does not exist; build it (`ninja` builds it from the CSVs) or "
                      "set MQAJIT_SYSTEM_DB to an existing file", path_.string());
    database_ = std::make_unique<sqlite::Database>(path_, sqlite::OpenMode::read_only);
    sqlite::with_retry(*database_, "reading the schema", [&] { require_schema(*database_); });
}

template <class Key>
std::vector<TunedRowOf<Key>> SystemDb::group_rows(const Key& group) {
    std::lock_guard lock(mutex_);
    std::vector<TunedRowOf<Key>> rows;
    sqlite::with_retry(*database_, "reading a group", [&] { rows = select_group(*database_, group); });
    for (auto& row : rows)
        if (row.origin.empty()) row.origin = "system:" + path_.string();
    return rows;
}

template <class Key>
std::vector<TunedRowOf<Key>> SystemDb::all_rows() {
    std::lock_guard lock(mutex_);
    std::vector<TunedRowOf<Key>> rows;
    sqlite::with_retry(*database_, "reading all rows", [&] { rows = select_all<Key>(*database_); });
    for (auto& row : rows)
        if (row.origin.empty()) row.origin = "system:" + path_.string();
    return rows;
}

template <class Key>
std::vector<Key> SystemDb::group_keys() {
    std::lock_guard lock(mutex_);
    return select_group_keys<Key>(*database_);
}

SystemDbBuild build_system_db(const std::filesystem::path& out, const std::vector<std::filesystem::path>& csv_files) {
    require_distinct_output(out, csv_files);
    SystemDbBuild loaded{.mqa_logits = load_config_files<ShapeKey>(files_of_op<ShapeKey>(csv_files)),
                         .paged_mqa_logits = load_config_files<PagedShapeKey>(files_of_op<PagedShapeKey>(csv_files)),
                         .mqa_topk = load_config_files<TopkShapeKey>(files_of_op<TopkShapeKey>(csv_files))};
    std::error_code error;
    if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path(), error);
    MQAJIT_CHECK_KIND(io, !error, "cannot create folder {}: {}; check its permissions", out.parent_path().string(),
                      error.message());
    // NOTES: a unique name beside the target (SQLite makes a database of the empty file), so
    // builds running at once never write one file; each renames a whole database into place.
    std::filesystem::path temp;
    create_sibling_temp(out, temp, 0644);
    struct RemoveUnlessRenamed {
        const std::filesystem::path& path;
        bool renamed = false;
        ~RemoveUnlessRenamed() {
            if (renamed) return;
            std::error_code ignored;
            std::filesystem::remove(path, ignored);
            std::filesystem::remove(path.string() + "-journal", ignored);
        }
    } cleanup{temp};
    {
        sqlite::Database database(temp, sqlite::OpenMode::read_write);
        // NOTES: a rollback-journal file opens read-only with no -wal/-shm beside it, which an
        // installed, write-protected share/ folder needs.
        database.execute("PRAGMA journal_mode=DELETE");
        sqlite::write_transaction(database, "writing the system rows", [&] {
            create_schema(database);
            for (const auto& row : loaded.mqa_logits.rows) upsert_row(database, row);
            for (const auto& row : loaded.paged_mqa_logits.rows) upsert_row(database, row);
            for (const auto& row : loaded.mqa_topk.rows) upsert_row(database, row);
            std::vector<std::string> names;
            for (const auto& file : sorted_config_order(csv_files)) names.push_back(file.generic_string());
            set_meta(database, "source_files", fmt::format("{}", fmt::join(names, "\n")));
            set_meta(database, "mqajit_version", kVersion);
        });
    }
    std::filesystem::rename(temp, out, error);
    MQAJIT_CHECK_KIND(io, !error, "cannot move {} onto {}: {}; check the folder's permissions", temp.string(),
                      out.string(), error.message());
    cleanup.renamed = true;
    return loaded;
}

#define MQAJIT_SYSTEM_DB_FOR(Key)                                                      \
    template std::vector<TunedRowOf<Key>> SystemDb::group_rows(const Key&);            \
    template std::vector<TunedRowOf<Key>> SystemDb::all_rows<Key>();                   \
    template std::vector<Key> SystemDb::group_keys<Key>();
MQAJIT_SYSTEM_DB_FOR(ShapeKey)
MQAJIT_SYSTEM_DB_FOR(PagedShapeKey)
MQAJIT_SYSTEM_DB_FOR(TopkShapeKey)
#undef MQAJIT_SYSTEM_DB_FOR

}  // namespace mqajit::tuning
