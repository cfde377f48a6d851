#pragma once
// The user's tuning database: an SQLite file in WAL mode that several processes may write at once
// (busy_timeout plus bounded retry, one transaction per insert). It is created on first write.
// A file that cannot be used (corrupt, not a database, read-only, locked beyond the retries, a
// foreign schema, a link, in a folder others may change: core/trusted_path.hpp) earns one warning; from then on this process keeps its rows in an in-memory
// database, so a write is never lost while the process lives and nothing ever crashes.

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tuning_db/sqlite.hpp"
#include "tuning_db/tuned_row.hpp"

namespace mqajit::tuning {

class UserDb {
public:
    static constexpr std::chrono::milliseconds kDefaultBusyTimeout{1000};

    // `busy_timeout`: how long SQLite waits on another process's lock before each retry.
    explicit UserDb(std::filesystem::path path, std::chrono::milliseconds busy_timeout = kDefaultBusyTimeout);
    ~UserDb();
    UserDb(const UserDb&) = delete;
    UserDb& operator=(const UserDb&) = delete;

    // Rows of Key's operator table come back with origin "user:<path>".
    template <class Key>
    std::vector<TunedRowOf<Key>> group_rows(const Key& group);
    template <class Key = ShapeKey>
    std::vector<TunedRowOf<Key>> all_rows();
    // Every group of Key's table that has rows.
    template <class Key = ShapeKey>
    std::vector<Key> group_keys();
    // All rows in one transaction, each replacing any row with its key.
    void insert(std::span<const TunedRow> rows);
    void insert(std::span<const PagedTunedRow> rows);
    void insert(std::span<const TopkTunedRow> rows);

    const std::filesystem::path& path() const { return path_; }
    // Whether rows now live in memory only, and why (empty while the file is in use).
    bool in_memory() const;
    std::string fallback_reason() const;
    // Why the file's rows could not be read (it exists, but is damaged, foreign or not to be
    // trusted); nullopt when they were read, or there is no file.
    std::optional<std::string> read_problem() const;

private:
    // Runs `select` under the lock (not at all while there is no file); an unusable database
    // falls back to memory (one warning).
    void read(const char* what, const std::function<void(sqlite::Database&)>& select);
    template <class Key>
    void insert_rows(std::span<const TunedRowOf<Key>> rows);
    enum class State { absent, file, memory };
    // Every table's rows, kept when the file is given up for memory.
    struct AllRows {
        std::vector<TunedRow> mqa_logits;
        std::vector<PagedTunedRow> paged_mqa_logits;
        std::vector<TopkTunedRow> mqa_topk;

        template <class Key>
        std::vector<TunedRowOf<Key>>& of() {
            if constexpr (std::is_same_v<Key, ShapeKey>) return mqa_logits;
            else if constexpr (std::is_same_v<Key, PagedShapeKey>) return paged_mqa_logits;
            else return mqa_topk;
        }
    };

    void open_existing_locked();
    void create_locked();
    void configure_locked(sqlite::Database& database);
    void fall_back_locked(const std::string& reason, bool keep_file_rows);
    AllRows copy_readable_rows_locked(std::string& note, bool& rows_readable);

    mutable std::mutex mutex_;
    std::filesystem::path path_;
    std::chrono::milliseconds busy_timeout_;
    State state_ = State::absent;
    std::unique_ptr<sqlite::Database> database_;
    std::string fallback_reason_;
    std::string read_problem_;
    AllRows written_;  // rows this process wrote to the file, for a later fallback
};

}  // namespace mqajit::tuning
