#include "tuning_db/sqlite.hpp"

#include <random>
#include <thread>

#include <fmt/format.h>

#include "core/log.hpp"

namespace mqajit::sqlite {
namespace {

std::string advice_for(int result) {
    switch (result & 0xff) {
        case SQLITE_BUSY:
        case SQLITE_LOCKED: return "another process holds a lock on it; retry, or find the process holding it";
        case SQLITE_NOTADB:
        case SQLITE_CORRUPT: return "the file is damaged or not a database; move it aside or delete it";
        case SQLITE_READONLY:
        case SQLITE_PERM:
        case SQLITE_CANTOPEN: return "check that the file and its folder exist and are readable/writable";
        case SQLITE_FULL: return "the disk is full; free some space";
        default: return "see the SQLite message above";
    }
}

}  // namespace

Statement::Statement(const Database& database, std::string_view sql) : database_(database), sql_(sql) {
    sqlite3_stmt* raw = nullptr;
    const int result = sqlite3_prepare_v3(database.handle(), sql_.c_str(), static_cast<int>(sql_.size()),
                                          SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
    handle_.reset(raw);
    if (result != SQLITE_OK) database.fail(result, fmt::format("preparing `{}`", sql_));
}

void Statement::check_bind(int result, int index) {
    if (result != SQLITE_OK) database_.fail(result, fmt::format("binding parameter {} of `{}`", index, sql_));
}

Statement& Statement::bind(int index, std::int64_t value) {
    check_bind(sqlite3_bind_int64(handle_.get(), index, value), index);
    return *this;
}

Statement& Statement::bind(int index, double value) {
    check_bind(sqlite3_bind_double(handle_.get(), index, value), index);
    return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
    check_bind(sqlite3_bind_text64(handle_.get(), index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
               index);
    return *this;
}

Statement& Statement::bind(int index, std::nullptr_t) {
    check_bind(sqlite3_bind_null(handle_.get(), index), index);
    return *this;
}

Statement& Statement::bind(int index, const std::optional<double>& value) {
    return value ? bind(index, *value) : bind(index, nullptr);
}

bool Statement::step() {
    const int result = sqlite3_step(handle_.get());
    if (result == SQLITE_ROW) return true;
    if (result == SQLITE_DONE) return false;
    // NOTES: reset here so a failed statement can be retried; sqlite3_reset returns the same error.
    sqlite3_reset(handle_.get());
    database_.fail(result, fmt::format("running `{}`", sql_));
}

void Statement::run() {
    while (step()) {
    }
}

void Statement::reset() {
    sqlite3_reset(handle_.get());
    sqlite3_clear_bindings(handle_.get());
}

bool Statement::is_null(int column) const { return sqlite3_column_type(handle_.get(), column) == SQLITE_NULL; }

std::int64_t Statement::column_int64(int column) const { return sqlite3_column_int64(handle_.get(), column); }

double Statement::column_double(int column) const { return sqlite3_column_double(handle_.get(), column); }

std::string Statement::column_text(int column) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(handle_.get(), column));
    if (text == nullptr) return {};
    return std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(handle_.get(), column)));
}

Database::Database(std::filesystem::path path, OpenMode mode, Links links) : path_(std::move(path)) {
    open(path_.string(), mode, false, links);
}

Database::Database(std::filesystem::path path, const std::string& uri, OpenMode mode, Links links)
    : path_(std::move(path)) {
    open(uri, mode, true, links);
}

Database::~Database() = default;

void Database::open(const std::string& name, OpenMode mode, bool uri, Links links) {
    int flags = SQLITE_OPEN_FULLMUTEX;
    switch (mode) {
        case OpenMode::read_only: flags |= SQLITE_OPEN_READONLY; break;
        case OpenMode::read_write: flags |= SQLITE_OPEN_READWRITE; break;
        case OpenMode::read_write_create: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE; break;
    }
    if (uri) flags |= SQLITE_OPEN_URI;
    if (links == Links::refuse) flags |= SQLITE_OPEN_NOFOLLOW;
    sqlite3* raw = nullptr;
    const int result = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
    // NOTES: SQLite hands back a handle even when opening fails; keep it so its message can be read.
    handle_.reset(raw);
    if (result != SQLITE_OK) fail(result, "opening it");
    sqlite3_extended_result_codes(raw, 1);
    // NOTES: without a busy timeout a lock held by another process fails the first statement at
    // once (for the system database that meant no system rows for the whole process).
    set_busy_timeout(kDefaultBusyTimeout);
}

void Database::execute(std::string_view sql) {
    const std::string text(sql);
    char* message = nullptr;
    const int result = sqlite3_exec(handle_.get(), text.c_str(), nullptr, nullptr, &message);
    sqlite3_free(message);
    if (result != SQLITE_OK) fail(result, fmt::format("running `{}`", text));
}

StatementUse Database::prepare(std::string_view sql) {
    auto found = statements_.find(std::string(sql));
    if (found == statements_.end()) {
        auto statement = std::make_unique<Statement>(*this, sql);
        found = statements_.emplace(std::string(sql), std::move(statement)).first;
    }
    found->second->reset();
    return StatementUse(*found->second);
}

void Database::set_busy_timeout(std::chrono::milliseconds timeout) {
    const int result = sqlite3_busy_timeout(handle_.get(), static_cast<int>(timeout.count()));
    if (result != SQLITE_OK) fail(result, "setting busy_timeout");
}

bool Database::read_only() const { return sqlite3_db_readonly(handle_.get(), "main") == 1; }

void Database::fail(int result, std::string_view doing) const {
    const char* message = handle_ ? sqlite3_errmsg(handle_.get()) : sqlite3_errstr(result);
    throw SqliteError(result,
                      fmt::format("SQLite database {}: {} failed: {} (code {}); {}", path_.string(), doing, message,
                                  result, advice_for(result)),
                      message);
}

std::string file_uri(const std::filesystem::path& path, std::string_view query) {
    std::string uri = "file:";
    for (unsigned char c : std::filesystem::absolute(path).string()) {
        if (c == '%' || c == '?' || c == '#' || c <= 0x20 || c >= 0x7f) {
            uri += fmt::format("%{:02X}", c);
        } else {
            uri += static_cast<char>(c);
        }
    }
    if (!query.empty()) {
        uri += '?';
        uri += query;
    }
    return uri;
}

void with_retry(const Database& database, std::string_view doing, const std::function<void()>& work) {
    // NOTES: busy_timeout waits inside SQLite, but a deferred transaction that must upgrade its
    // lock, or a WAL snapshot gone stale, fails at once with BUSY; those only succeed when tried
    // again from the start, after a short randomized sleep so colliding writers drift apart.
    thread_local std::minstd_rand jitter{std::random_device{}()};
    auto sleep = std::chrono::milliseconds(2);
    for (int attempt = 1;; ++attempt) {
        try {
            work();
            return;
        } catch (const SqliteError& e) {
            if (!e.is_busy()) throw;
            if (attempt == kMaxAttempts) {
                throw SqliteError(e.code(),
                                  fmt::format("{} (gave up {} after {} attempts)", e.what(), doing, kMaxAttempts),
                                  e.sqlite_message());
            }
            log().debug("{}: {} busy (attempt {}), retrying", database.path().string(), doing, attempt);
        }
        std::this_thread::sleep_for(sleep + std::chrono::milliseconds(jitter() % (sleep.count() + 1)));
        sleep = std::min(sleep * 2, std::chrono::milliseconds(500));
    }
}

void write_transaction(Database& database, std::string_view doing, const std::function<void()>& work) {
    with_retry(database, doing, [&] {
        database.execute("BEGIN IMMEDIATE");
        try {
            work();
            database.execute("COMMIT");
        } catch (...) {
            sqlite3_exec(database.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
            throw;
        }
    });
}

}  // namespace mqajit::sqlite
