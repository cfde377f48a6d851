#include "tuning_db/row_table.hpp"

#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.hpp"
#include "core/parse_number.hpp"
#include "core/utf8.hpp"

namespace mqajit::tuning {
namespace {

template <class T>
constexpr std::string_view sql_type() {
    if constexpr (std::is_same_v<T, std::string>) return "TEXT NOT NULL";
    else if constexpr (std::is_same_v<T, std::optional<double>>) return "REAL";
    else if constexpr (std::is_floating_point_v<T>) return "REAL NOT NULL";
    else return "INTEGER NOT NULL";
}

// NOTES: text is made valid UTF-8 on the way out (U+FFFD for other bytes), so a row written by
// other means cannot break JSON output or Python; `db check` reports such rows (row_problem).
void read_column(const sqlite::Statement& statement, int column, std::string& out) {
    out = to_valid_utf8(statement.column_text(column));
}
void read_column(const sqlite::Statement& statement, int column, int& out) {
    const std::int64_t value = statement.column_int64(column);
    // A value out of int's range cannot be a size mqajit wrote; 0 makes row_problem refuse the row.
    out = std::in_range<int>(value) ? static_cast<int>(value) : 0;
}
void read_column(const sqlite::Statement& statement, int column, std::int64_t& out) {
    out = statement.column_int64(column);
}
void read_column(const sqlite::Statement& statement, int column, double& out) {
    out = statement.column_double(column);
}
void read_column(const sqlite::Statement& statement, int column, std::optional<double>& out) {
    out = statement.is_null(column) ? std::nullopt : std::optional<double>(statement.column_double(column));
}

// Every column name in table order: key columns, value columns, then origin.
std::vector<std::string> column_names() {
    std::vector<std::string> names;
    auto add = [&](std::string_view column, const auto&) { names.emplace_back(column); };
    const TunedRow row;
    row.key.visit(add);
    row.visit_values(add);
    names.emplace_back("origin");
    return names;
}

const std::string& select_columns() {
    static const std::string text = fmt::format("{}", fmt::join(column_names(), ", "));
    return text;
}

const std::string& key_columns() {
    static const std::string text = [] {
        std::vector<std::string> names;
        ShapeKey{}.visit([&](std::string_view column, const auto&) { names.emplace_back(column); });
        return fmt::format("{}", fmt::join(names, ", "));
    }();
    return text;
}

// The key columns that name a group (all but the lengths), in table order.
const std::vector<std::string>& group_column_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> list;
        ShapeKey{}.visit([&](std::string_view column, const auto&) {
            if (!is_length_column(column)) list.emplace_back(column);
        });
        return list;
    }();
    return names;
}

// "arch = ?1 AND cu_num = ?2 AND ...": one term per group column.
const std::string& group_condition() {
    static const std::string text = [] {
        std::vector<std::string> terms;
        for (const std::string& column : group_column_names())
            terms.push_back(fmt::format("{} = ?{}", column, terms.size() + 1));
        return fmt::format("{}", fmt::join(terms, " AND "));
    }();
    return text;
}

TunedRow read_row(const sqlite::Statement& statement) {
    TunedRow row;
    int column = 0;
    auto read = [&](std::string_view, auto& value) { read_column(statement, column++, value); };
    row.key.visit(read);
    row.visit_values(read);
    row.origin = to_valid_utf8(statement.column_text(column));
    return row;
}

std::vector<TunedRow> read_rows(sqlite::Statement& statement) {
    std::vector<TunedRow> rows;
    while (statement.step()) rows.push_back(read_row(statement));
    return rows;
}

}  // namespace

const std::string& table_ddl() {
    static const std::string text = [] {
        std::string ddl = fmt::format("CREATE TABLE IF NOT EXISTS {} (", kTableName);
        auto add = [&](std::string_view column, const auto& value) {
            ddl += fmt::format("{} {}, ", column, sql_type<std::decay_t<decltype(value)>>());
        };
        const TunedRow row;
        row.key.visit(add);
        row.visit_values(add);
        ddl += fmt::format("origin TEXT NOT NULL, PRIMARY KEY ({})) WITHOUT ROWID", key_columns());
        return ddl;
    }();
    return text;
}

void create_schema(sqlite::Database& database) {
    database.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    database.execute(table_ddl());
    database.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?1)")
        ->bind(1, std::to_string(kSchemaVersion))
        .run();
}

std::optional<int> schema_version(sqlite::Database& database) {
    {
        auto has_meta = database.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
        if (!has_meta->step() || has_meta->column_int64(0) == 0) return std::nullopt;
    }
    const auto text = meta(database, "schema_version");
    if (!text) return std::nullopt;
    const auto version = parse_whole_int(*text);
    MQAJIT_CHECK_KIND(database, version.has_value(),
                      "tuning database {} records schema_version '{}', not a number; it was not written by mqajit: "
                      "move it aside", database.path().string(), to_valid_utf8(*text));
    return version;
}

void require_schema(sqlite::Database& database) {
    const auto version = schema_version(database);
    MQAJIT_CHECK_KIND(database, version.has_value(),
                      "tuning database {} has no meta table; it was not written by mqajit (rebuild it with "
                      "`mqajit db build-system` or move it aside)", database.path().string());
    MQAJIT_CHECK_KIND(database, *version <= kSchemaVersion,
                      "tuning database {} has schema version {}, newer than the version {} this mqajit reads: a "
                      "newer mqajit wrote it; use that one, or move the file aside so a new one is created",
                      database.path().string(), *version, kSchemaVersion);
    MQAJIT_CHECK_KIND(database, *version == kSchemaVersion,
                      "tuning database {} has schema version {}, older than the version {} this mqajit reads: "
                      "rebuild a system database (the build does, or `mqajit db build-system`); a user database "
                      "is migrated when this mqajit opens it writable (make it writable), or move it aside",
                      database.path().string(), *version, kSchemaVersion);
    // NOTES: the meta table alone does not make a usable file: the tuning table and every column
    // this build reads must be there too, or the first lookup would fail with a raw SQLite error.
    auto has_table = database.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1");
    has_table->bind(1, kTableName);
    MQAJIT_CHECK_KIND(database, has_table->step() && has_table->column_int64(0) == 1,
                      "tuning database {} has no table {}; it was damaged or not written by mqajit: rebuild it "
                      "(`mqajit db build-system`) or move it aside", database.path().string(), kTableName);
    try {
        (void)database.prepare(fmt::format("SELECT {} FROM {} LIMIT 0", select_columns(), kTableName));
    } catch (const sqlite::SqliteError& e) {
        MQAJIT_FAIL(database, "tuning database {}'s table {} lacks columns this mqajit reads ({}); rebuild it or "
                    "move it aside", database.path().string(), kTableName, e.sqlite_message());
    }
}

std::optional<int> migrate_schema(sqlite::Database& database) {
    std::optional<int> migrated_from;
    sqlite::write_transaction(database, "migrating the schema", [&] {
        // NOTES: read inside the write transaction: another process may have migrated it meanwhile.
        const auto version = schema_version(database);
        if (version != 1) return;
        // NOTES: version 1 is today's table less the clean_logits key column; its rows were all
        // tuned with clean_logits=True.
        const std::string old_table = fmt::format("{}_v1", kTableName);
        database.execute(fmt::format("ALTER TABLE {} RENAME TO {}", kTableName, old_table));
        database.execute(table_ddl());
        std::vector<std::string> selected;
        for (const std::string& column : column_names())
            selected.push_back(column == "clean_logits" ? std::to_string(kCleanLogitsWithoutColumn) : column);
        database.execute(fmt::format("INSERT INTO {} ({}) SELECT {} FROM {}", kTableName,
                                     fmt::join(column_names(), ", "), fmt::join(selected, ", "), old_table));
        database.execute(fmt::format("DROP TABLE {}", old_table));
        set_meta(database, "schema_version", std::to_string(kSchemaVersion));
        migrated_from = *version;
    });
    return migrated_from;
}

void set_meta(sqlite::Database& database, std::string_view key, std::string_view value) {
    database.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")->bind(1, key).bind(2, value).run();
}

std::optional<std::string> meta(sqlite::Database& database, std::string_view key) {
    auto statement = database.prepare("SELECT value FROM meta WHERE key = ?1");
    statement->bind(1, key);
    if (!statement->step()) return std::nullopt;
    return statement->column_text(0);
}

void upsert_row(sqlite::Database& database, const TunedRow& row) {
    static const std::string sql = [] {
        const auto names = column_names();
        std::vector<std::string> slots;
        for (std::size_t i = 1; i <= names.size(); ++i) slots.push_back(fmt::format("?{}", i));
        return fmt::format("INSERT OR REPLACE INTO {} ({}) VALUES ({})", kTableName, fmt::join(names, ", "),
                           fmt::join(slots, ", "));
    }();
    auto statement = database.prepare(sql);
    int index = 1;
    auto bind = [&](std::string_view, const auto& value) { statement->bind(index++, value); };
    row.key.visit(bind);
    row.visit_values(bind);
    statement->bind(index, row.origin);
    statement->run();
}

std::vector<TunedRow> select_group(sqlite::Database& database, const GroupKeyView& group) {
    static const std::string sql =
        fmt::format("SELECT {} FROM {} WHERE {}", select_columns(), kTableName, group_condition());
    auto statement = database.prepare(sql);
    int index = 1;
    group.key().visit([&](std::string_view column, const auto& value) {
        if (!is_length_column(column)) statement->bind(index++, value);
    });
    return read_rows(*statement);
}

std::vector<ShapeKey> select_group_keys(sqlite::Database& database) {
    static const std::string sql = fmt::format("SELECT DISTINCT {0} FROM {1} ORDER BY {0}",
                                               fmt::join(group_column_names(), ", "), kTableName);
    auto statement = database.prepare(sql);
    std::vector<ShapeKey> keys;
    while (statement->step()) {
        ShapeKey key;
        int column = 0;
        key.visit([&](std::string_view name, auto& value) {
            if (!is_length_column(name)) read_column(*statement, column++, value);
        });
        // NOTES: a group no mqajit could have written (a size that is not positive, a mode other
        // than 0 or 1: the file was edited or damaged) never serves, nor stands in as the nearest
        // SM count; `db check` names its rows. The lengths are not part of a group.
        ShapeKey probe = key;
        probe.seq_len = probe.seq_len_kv = 1;
        if (key_problem(probe)) continue;
        keys.push_back(std::move(key));
    }
    return keys;
}

std::vector<TunedRow> select_all(sqlite::Database& database) {
    static const std::string sql =
        fmt::format("SELECT {} FROM {} ORDER BY {}", select_columns(), kTableName, key_columns());
    return read_rows(*database.prepare(sql));
}

std::int64_t count_rows(sqlite::Database& database) {
    static const std::string sql = fmt::format("SELECT count(*) FROM {}", kTableName);
    auto statement = database.prepare(sql);
    statement->step();
    return statement->column_int64(0);
}

}  // namespace mqajit::tuning
