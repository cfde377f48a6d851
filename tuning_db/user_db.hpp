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

    // Rows come back with origin "user:<path>".
    std::vector<TunedRow> group_rows(const GroupKeyView& group);
    std::vector<TunedRow> all_rows();
    // Every group that has rows.
    std::vector<ShapeKey> group_keys();
    // All rows in one transaction, each replacing any row with its shape key.
    void insert(std::span<const TunedRow> rows);

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
    std::vector<TunedRow> read_rows(const char* what,
                                    const std::function<std::vector<TunedRow>(sqlite::Database&)>& select);
    enum class State { absent, file, memory };

    void open_existing_locked();
    void create_locked();
    void configure_locked(sqlite::Database& database);
    void fall_back_locked(const std::string& reason, bool keep_file_rows);
    std::vector<TunedRow> copy_readable_rows_locked(std::string& note, bool& rows_readable);
    std::vector<TunedRow> with_origin(std::vector<TunedRow> rows) const;

    mutable std::mutex mutex_;
    std::filesystem::path path_;
    std::chrono::milliseconds busy_timeout_;
    State state_ = State::absent;
    std::unique_ptr<sqlite::Database> database_;
    std::string fallback_reason_;
    std::string read_problem_;
    std::vector<TunedRow> written_;  // rows this process wrote to the file, for a later fallback
};

}  // namespace mqajit::tuning
