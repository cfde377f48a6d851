#pragma once
// Two small RAII classes over the SQLite C API: a Database connection (which caches its prepared
// statements) and a Statement with typed, checked binds. Every error names the database file.

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "mqajit/error.hpp"

namespace mqajit::sqlite {

// An mqajit::Error(database) that also carries SQLite's extended result code.
class SqliteError : public Error {
public:
    SqliteError(int result_code, const std::string& message, std::string sqlite_message)
        : Error(ErrorKind::database, message), code_(result_code), sqlite_message_(std::move(sqlite_message)) {}
    int code() const noexcept { return code_; }        // the extended code, e.g. SQLITE_BUSY_SNAPSHOT
    int primary_code() const noexcept { return code_ & 0xff; }  // e.g. SQLITE_BUSY
    bool is_busy() const noexcept { return primary_code() == SQLITE_BUSY || primary_code() == SQLITE_LOCKED; }
    // SQLite's own words, e.g. "file is not a database".
    const std::string& sqlite_message() const noexcept { return sqlite_message_; }

private:
    int code_;
    std::string sqlite_message_;
};

class Database;

class Statement {
public:
    Statement(const Database& database, std::string_view sql);
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    // Parameters count from 1, as in SQLite.
    Statement& bind(int index, std::int64_t value);
    Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
    Statement& bind(int index, double value);
    Statement& bind(int index, std::string_view value);  // copied by SQLite (SQLITE_TRANSIENT)
    Statement& bind(int index, std::nullptr_t);
    Statement& bind(int index, const std::optional<double>& value);

    // Runs to the next row: true when a row is ready, false when the statement is done.
    bool step();
    // Steps a statement that returns no rows.
    void run();
    void reset();  // ready to run again, bindings cleared

    // Columns count from 0.
    bool is_null(int column) const;
    std::int64_t column_int64(int column) const;
    double column_double(int column) const;
    std::string column_text(int column) const;

    const std::string& sql() const { return sql_; }

private:
    void check_bind(int result, int index);

    struct Finalize {
        void operator()(sqlite3_stmt* statement) const { sqlite3_finalize(statement); }
    };
    const Database& database_;
    std::string sql_;
    std::unique_ptr<sqlite3_stmt, Finalize> handle_;
};

// A cached statement checked out for one use; it resets the statement when it goes away.
// NOTES: a SELECT left mid-way keeps its read transaction (and its WAL snapshot) open, which makes
// the connection's next write fail with SQLITE_BUSY_SNAPSHOT; resetting on scope exit rules it out.
class StatementUse {
public:
    explicit StatementUse(Statement& statement) : statement_(statement) {}
    ~StatementUse() { statement_.reset(); }
    StatementUse(const StatementUse&) = delete;
    StatementUse& operator=(const StatementUse&) = delete;
    Statement* operator->() const { return &statement_; }
    Statement& operator*() const { return statement_; }

private:
    Statement& statement_;
};

enum class OpenMode {
    read_only,          // never writes; the file must exist
    read_write,         // the file must exist
    read_write_create,  // creates the file if missing
};

// Whether opening may follow a symbolic link at the database's own path.
enum class Links { follow, refuse };

class Database {
public:
    // Every handle waits this long on another connection's lock before a statement reports busy.
    static constexpr std::chrono::milliseconds kDefaultBusyTimeout{5000};

    // ":memory:" opens a private in-memory database. Throws SqliteError naming the file.
    Database(std::filesystem::path path, OpenMode mode, Links links = Links::follow);
    // Opens through an SQLite URI ("file:...?mode=ro&immutable=1"); `path` is for messages.
    Database(std::filesystem::path path, const std::string& uri, OpenMode mode, Links links = Links::follow);
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    ~Database();

    // Runs one or more statements that return nothing (DDL, PRAGMA, BEGIN/COMMIT).
    void execute(std::string_view sql);
    // The cached prepared statement for `sql`, unbound, for one use. Not reentrant per SQL text.
    StatementUse prepare(std::string_view sql);
    void set_busy_timeout(std::chrono::milliseconds timeout);

    // True when SQLite opened the file read-only (asked to, or the file is write-protected).
    bool read_only() const;
    const std::filesystem::path& path() const { return path_; }
    sqlite3* handle() const { return handle_.get(); }

    // Throws SqliteError for `result`, saying which file and what was being done.
    [[noreturn]] void fail(int result, std::string_view doing) const;

private:
    void open(const std::string& name, OpenMode mode, bool uri, Links links);

    struct Close {
        void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
    };
    std::filesystem::path path_;
    std::unique_ptr<sqlite3, Close> handle_;
    std::unordered_map<std::string, std::unique_ptr<Statement>> statements_;
};

// Builds an SQLite URI for a file path with query parameters, escaping what URIs need escaped.
std::string file_uri(const std::filesystem::path& path, std::string_view query);

// Runs `work` and retries it while SQLite reports the database busy or locked: up to
// kMaxAttempts tries with growing sleeps between them (on top of the connection's busy_timeout).
// The last failure is rethrown with the number of attempts in its message.
inline constexpr int kMaxAttempts = 8;
void with_retry(const Database& database, std::string_view doing, const std::function<void()>& work);

// Runs `work` inside BEGIN IMMEDIATE ... COMMIT (rolled back if it throws), with retry.
void write_transaction(Database& database, std::string_view doing, const std::function<void()>& work);

}  // namespace mqajit::sqlite
