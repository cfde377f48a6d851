#include "tuning_db/user_db.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sys/stat.h>

#include "core/check.hpp"
#include "core/files.hpp"
#include "core/log.hpp"
#include "core/settings.hpp"
#include "core/trusted_path.hpp"
#include "tuning_db/row_table.hpp"

namespace mqajit::tuning {
namespace {

// Why a file cannot be used, in the words of the warning: "is damaged or not an SQLite database".
std::string unusable_because(const Error& error) {
    const auto* sqlite_error = dynamic_cast<const sqlite::SqliteError*>(&error);
    if (sqlite_error == nullptr) return fmt::format("cannot be used: {}", error.what());
    switch (sqlite_error->primary_code()) {
        case SQLITE_NOTADB:
        case SQLITE_CORRUPT:
            return fmt::format("is damaged or not an SQLite database ({})", sqlite_error->sqlite_message());
        case SQLITE_READONLY: return "is read-only";
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            return fmt::format("stayed locked by another process through {} attempts ({})", sqlite::kMaxAttempts,
                               sqlite_error->sqlite_message());
        default: return fmt::format("cannot be used: {}", error.what());
    }
}

// Why the file at `path` must not be opened: it could be changed by someone this user does not
// trust, or it is a link (which could point anywhere, e.g. at a file of root's when root runs).
std::optional<std::string> location_problem(const std::filesystem::path& path) {
    if (path.empty()) {
        return "cannot be used: no location is known (neither HOME, XDG_CACHE_HOME nor a home folder in the "
               "passwd database); set MQAJIT_TUNING_DB or MQAJIT_CACHE_DIR";
    }
    try {
        const TrustPolicy policy = TrustPolicy::for_process(settings().cache_group);
        const std::filesystem::path folder = std::filesystem::absolute(path).parent_path();
        if (auto problem = untrusted_folder_problem(folder, policy)) return "cannot be used: " + *problem;
        struct stat info {};
        if (::lstat(path.c_str(), &info) != 0) return std::nullopt;  // to be created
        if (S_ISLNK(info.st_mode)) {
            return "cannot be used: it is a symbolic link, which mqajit does not follow for a file it writes; give "
                   "the path of the file itself";
        }
        if (!S_ISREG(info.st_mode)) return fmt::format("cannot be used: it is {}, not a file", file_type_name(info.st_mode));
        if (auto problem = policy.entry_problem(info, "it")) return "cannot be used: " + *problem;
    } catch (const Error& e) {
        return fmt::format("cannot be used: {}", e.what());
    }
    return std::nullopt;
}

}  // namespace

UserDb::UserDb(std::filesystem::path path, std::chrono::milliseconds busy_timeout)
    : path_(std::move(path)), busy_timeout_(busy_timeout) {
    std::lock_guard lock(mutex_);
    std::error_code error;
    if (std::filesystem::exists(path_, error)) open_existing_locked();
}

UserDb::~UserDb() = default;

bool UserDb::in_memory() const {
    std::lock_guard lock(mutex_);
    return state_ == State::memory;
}

std::string UserDb::fallback_reason() const {
    std::lock_guard lock(mutex_);
    return fallback_reason_;
}

std::optional<std::string> UserDb::read_problem() const {
    std::lock_guard lock(mutex_);
    if (read_problem_.empty()) return std::nullopt;
    return read_problem_;
}

void UserDb::configure_locked(sqlite::Database& database) {
    database.set_busy_timeout(busy_timeout_);
    // NOTES: WAL lets lookups read while a tuner writes; NORMAL sync in WAL mode cannot corrupt
    // the file, it can only drop the last commits on power loss, and tuning rows can be redone.
    sqlite::with_retry(database, "switching to WAL mode", [&] { database.execute("PRAGMA journal_mode=WAL"); });
    database.execute("PRAGMA synchronous=NORMAL");
}

void UserDb::open_existing_locked() {
    if (auto problem = location_problem(path_)) {
        fall_back_locked(*problem, false);
        return;
    }
    try {
        auto database = std::make_unique<sqlite::Database>(path_, sqlite::OpenMode::read_write, sqlite::Links::refuse);
        if (database->read_only()) {
            database.reset();
            fall_back_locked("is read-only", true);
            return;
        }
        database->set_busy_timeout(busy_timeout_);
        std::optional<int> version;
        sqlite::with_retry(*database, "reading the schema version", [&] { version = schema_version(*database); });
        // NOTES: no meta table means a file another process has just created but not yet filled
        // in (or an empty file); the schema statements are idempotent, so filling it in is safe.
        // A file holding other tables is another program's: it is refused, and left as it was.
        if (!version) {
            std::vector<std::string> foreign;
            sqlite::with_retry(*database, "reading the tables", [&] { foreign = foreign_tables(*database); });
            MQAJIT_CHECK_KIND(database, foreign.empty(),
                              "{} holds tables mqajit does not know ({}) and no schema version: it is not an mqajit "
                              "tuning database; pass another file (--db, MQAJIT_TUNING_DB) or move it aside",
                              path_.string(), fmt::join(foreign, ", "));
            sqlite::write_transaction(*database, "creating the tables", [&] { create_schema(*database); });
        }
        if (version && *version < kSchemaVersion) {
            if (const auto from = migrate_schema(*database)) {
                const std::int64_t prefill_rows = count_rows<ShapeKey>(*database);
                const std::string kept =
                    *from == 1   ? fmt::format("its {} prefill row(s) are clean_logits=1 float32 rows, what they were "
                                               "tuned with", prefill_rows)
                    : *from < 4 ? fmt::format("its {} prefill row(s) are float32 rows, what they were tuned with",
                                              prefill_rows)
                                : fmt::format("its {} prefill row(s) are unchanged", prefill_rows);
                std::vector<std::string> added;
                if (*from < 4) added.emplace_back("the logits_dtype key");
                if (*from < 3) added.emplace_back("the paged_mqa_logits table");
                added.emplace_back("the mqa_topk table");
                const std::string last = added.back();
                added.pop_back();
                log().warn("migrated user tuning database {} from schema version {} to {} (which adds {}{}{}): {}; an "
                           "older mqajit no longer reads the file", path_.string(), *from, kSchemaVersion,
                           fmt::join(added, ", "), added.empty() ? "" : " and ", last, kept);
            }
        }
        require_schema(*database);
        configure_locked(*database);  // WAL only in a file this mqajit reads: a refused one is left as it was
        database_ = std::move(database);
        state_ = State::file;
    } catch (const sqlite::SqliteError& e) {
        // NOTES: a full disk or a write-protected file can still be read: keep serving its rows.
        fall_back_locked(unusable_because(e), e.primary_code() == SQLITE_READONLY || e.primary_code() == SQLITE_FULL);
    } catch (const Error& e) {
        fall_back_locked(unusable_because(e), false);
    }
}

void UserDb::create_locked() {
    if (auto problem = location_problem(path_)) {
        fall_back_locked(*problem, false);
        return;
    }
    try {
        std::error_code error;
        if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path(), error);
        if (error) {
            fall_back_locked(fmt::format("cannot be created: making folder {} failed: {}",
                                         path_.parent_path().string(), error.message()),
                             false);
            return;
        }
        auto database =
            std::make_unique<sqlite::Database>(path_, sqlite::OpenMode::read_write_create, sqlite::Links::refuse);
        configure_locked(*database);
        sqlite::write_transaction(*database, "creating the tables", [&] { create_schema(*database); });
        require_schema(*database);
        database_ = std::move(database);
        state_ = State::file;
        log().info("created user tuning database {}", path_.string());
    } catch (const Error& e) {
        fall_back_locked(unusable_because(e), false);
    }
}

UserDb::AllRows UserDb::copy_readable_rows_locked(std::string& note, bool& rows_readable) {
    // NOTES: a write-protected WAL database can only be read if its -shm file can be made; when
    // not, `immutable` reads the main file without locks, which is safe since we never write it.
    for (const char* query : {"mode=ro", "mode=ro&immutable=1"}) {
        try {
            sqlite::Database reader(path_, sqlite::file_uri(path_, query), sqlite::OpenMode::read_only,
                                    sqlite::Links::refuse);
            require_schema(reader);
            AllRows rows{.mqa_logits = select_all<ShapeKey>(reader),
                         .paged_mqa_logits = select_all<PagedShapeKey>(reader),
                         .mqa_topk = select_all<TopkShapeKey>(reader)};
            note = fmt::format("its {} rows are still used",
                               rows.mqa_logits.size() + rows.paged_mqa_logits.size() + rows.mqa_topk.size());
            rows_readable = true;
            return rows;
        } catch (const Error& e) {
            note = fmt::format("its rows cannot be read either ({})", e.what());
        }
    }
    return {};
}

void UserDb::fall_back_locked(const std::string& reason, bool keep_file_rows) {
    AllRows kept;
    std::string note;
    bool rows_readable = false;
    if (keep_file_rows) kept = copy_readable_rows_locked(note, rows_readable);
    std::error_code error;
    // NOTES: rows of an existing file that could not be read are a read failure, which commands
    // that print rows must report (read_problem), not an empty table.
    read_problem_ = rows_readable || path_.empty() || !std::filesystem::exists(std::filesystem::symlink_status(path_, error))
                        ? std::string()
                        : reason;
    database_.reset();
    auto memory = std::make_unique<sqlite::Database>(":memory:", sqlite::OpenMode::read_write_create);
    create_schema(*memory);
    // NOTES: then every row this process wrote to the file, which it may no longer be able to read
    // back (a damaged page found after the write): none is lost while the process lives.
    sqlite::write_transaction(*memory, "copying rows into memory", [&] {
        for (const AllRows* rows : {&kept, &written_}) {
            for (const TunedRow& row : rows->mqa_logits) upsert_row(*memory, row);
            for (const PagedTunedRow& row : rows->paged_mqa_logits) upsert_row(*memory, row);
            for (const TopkTunedRow& row : rows->mqa_topk) upsert_row(*memory, row);
        }
    });
    database_ = std::move(memory);
    state_ = State::memory;
    fallback_reason_ = reason;
    log().warn("user tuning database {} {}{}; tuning rows written by this process stay in memory only and are "
               "lost at exit. Move the file aside or make it writable, or point MQAJIT_TUNING_DB (or `mqajit db "
               "--db`) at another path.",
               path_.empty() ? "(no path)" : path_.string(), reason, note.empty() ? "" : fmt::format(" ({})", note));
}

void UserDb::read(const char* what, const std::function<void(sqlite::Database&)>& select) {
    std::lock_guard lock(mutex_);
    if (state_ == State::absent) {
        std::error_code error;
        if (!std::filesystem::exists(path_, error)) return;
        open_existing_locked();
    }
    try {
        sqlite::with_retry(*database_, what, [&] { select(*database_); });
    } catch (const Error& e) {
        fall_back_locked(unusable_because(e), true);
        select(*database_);  // what memory now holds: the rows still readable and this process's own
    }
}

namespace {

template <class Row>
std::vector<Row> with_origin(std::vector<Row> rows, const std::filesystem::path& path) {
    const std::string origin = "user:" + path.string();
    for (Row& row : rows) row.origin = origin;
    return rows;
}

}  // namespace

template <class Key>
std::vector<Key> UserDb::group_keys() {
    std::vector<Key> keys;
    read("reading the tuned groups", [&](sqlite::Database& database) { keys = select_group_keys<Key>(database); });
    return keys;
}

template <class Key>
std::vector<TunedRowOf<Key>> UserDb::group_rows(const Key& group) {
    std::vector<TunedRowOf<Key>> rows;
    read("reading a group", [&](sqlite::Database& database) { rows = select_group(database, group); });
    return with_origin(std::move(rows), path_);
}

template <class Key>
std::vector<TunedRowOf<Key>> UserDb::all_rows() {
    std::vector<TunedRowOf<Key>> rows;
    read("reading all rows", [&](sqlite::Database& database) { rows = select_all<Key>(database); });
    return with_origin(std::move(rows), path_);
}

void UserDb::insert(std::span<const TunedRow> rows) { insert_rows<ShapeKey>(rows); }
void UserDb::insert(std::span<const PagedTunedRow> rows) { insert_rows<PagedShapeKey>(rows); }
void UserDb::insert(std::span<const TopkTunedRow> rows) { insert_rows<TopkShapeKey>(rows); }

template <class Key>
void UserDb::insert_rows(std::span<const TunedRowOf<Key>> rows) {
    std::lock_guard lock(mutex_);
    if (state_ == State::absent) {
        std::error_code error;
        if (std::filesystem::exists(path_, error)) open_existing_locked();
        else create_locked();
    }
    auto write = [&] {
        sqlite::write_transaction(*database_, fmt::format("inserting {} row(s)", rows.size()), [&] {
            for (const auto& row : rows) upsert_row(*database_, row);
        });
    };
    if (state_ == State::file) {
        try {
            write();
            auto& written = written_.of<Key>();
            written.insert(written.end(), rows.begin(), rows.end());
            return;
        } catch (const Error& e) {
            fall_back_locked(unusable_because(e), true);
        }
    }
    write();
}

#define MQAJIT_USER_DB_FOR(Key)                                                       \
    template std::vector<Key> UserDb::group_keys<Key>();                              \
    template std::vector<TunedRowOf<Key>> UserDb::group_rows(const Key&);             \
    template std::vector<TunedRowOf<Key>> UserDb::all_rows<Key>();
MQAJIT_USER_DB_FOR(ShapeKey)
MQAJIT_USER_DB_FOR(PagedShapeKey)
MQAJIT_USER_DB_FOR(TopkShapeKey)
#undef MQAJIT_USER_DB_FOR

}  // namespace mqajit::tuning
