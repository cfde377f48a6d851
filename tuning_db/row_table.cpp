#include "tuning_db/row_table.hpp"

#include <algorithm>

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

template <class Key>
constexpr std::string_view table_name() {
    return Key::kOp.table;
}

// Every column name of a key type's table in table order: key columns, value columns, then origin.
template <class Key>
std::vector<std::string> column_names() {
    std::vector<std::string> names;
    auto add = [&](std::string_view column, const auto&) { names.emplace_back(column); };
    const TunedRowOf<Key> row;
    row.key.visit(add);
    row.visit_values(add);
    names.emplace_back("origin");
    return names;
}

template <class Key>
const std::string& select_columns() {
    static const std::string text = fmt::format("{}", fmt::join(column_names<Key>(), ", "));
    return text;
}

template <class Key>
const std::string& key_columns() {
    static const std::string text = [] {
        std::vector<std::string> names;
        Key{}.visit([&](std::string_view column, const auto&) { names.emplace_back(column); });
        return fmt::format("{}", fmt::join(names, ", "));
    }();
    return text;
}

// The key columns that name a group (all but the lengths), in table order.
template <class Key>
const std::vector<std::string>& group_column_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> list;
        Key{}.visit([&](std::string_view column, const auto&) {
            if (!is_length_column<Key>(column)) list.emplace_back(column);
        });
        return list;
    }();
    return names;
}

// "arch = ?1 AND cu_num = ?2 AND ...": one term per group column.
template <class Key>
const std::string& group_condition() {
    static const std::string text = [] {
        std::vector<std::string> terms;
        for (const std::string& column : group_column_names<Key>())
            terms.push_back(fmt::format("{} = ?{}", column, terms.size() + 1));
        return fmt::format("{}", fmt::join(terms, " AND "));
    }();
    return text;
}

template <class Key>
TunedRowOf<Key> read_row(const sqlite::Statement& statement) {
    TunedRowOf<Key> row;
    int column = 0;
    auto read = [&](std::string_view, auto& value) { read_column(statement, column++, value); };
    row.key.visit(read);
    row.visit_values(read);
    row.origin = to_valid_utf8(statement.column_text(column));
    return row;
}

template <class Key>
std::vector<TunedRowOf<Key>> read_rows(sqlite::Statement& statement) {
    std::vector<TunedRowOf<Key>> rows;
    while (statement.step()) rows.push_back(read_row<Key>(statement));
    return rows;
}

template <class Key>
void upsert_any_row(sqlite::Database& database, const TunedRowOf<Key>& row) {
    static const std::string sql = [] {
        const auto names = column_names<Key>();
        std::vector<std::string> slots;
        for (std::size_t i = 1; i <= names.size(); ++i) slots.push_back(fmt::format("?{}", i));
        return fmt::format("INSERT OR REPLACE INTO {} ({}) VALUES ({})", table_name<Key>(), fmt::join(names, ", "),
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

// The prefill table rebuilt with the key columns an older schema lacks: version 1 had neither
// clean_logits nor logits_dtype (its rows were all tuned with clean_logits=True), version 2 and 3
// no logits_dtype (their rows all float32).
void add_prefill_key_columns(sqlite::Database& database, int version) {
    constexpr std::string_view table = table_name<ShapeKey>();
    const std::string old_table = fmt::format("{}_v{}", table, version);
    database.execute(fmt::format("ALTER TABLE {} RENAME TO {}", table, old_table));
    database.execute(table_ddl<ShapeKey>());
    std::vector<std::string> selected;
    for (const std::string& column : column_names<ShapeKey>()) {
        if (column == "clean_logits" && version == 1) selected.push_back(std::to_string(kCleanLogitsWithoutColumn));
        else if (column == "logits_dtype") selected.push_back(fmt::format("'{}'", kLogitsDtypes[0]));
        else selected.push_back(column);
    }
    database.execute(fmt::format("INSERT INTO {} ({}) SELECT {} FROM {}", table, fmt::join(column_names<ShapeKey>(), ", "),
                                 fmt::join(selected, ", "), old_table));
    database.execute(fmt::format("DROP TABLE {}", old_table));
}

}  // namespace

template <class Key>
const std::string& table_ddl() {
    static const std::string text = [] {
        std::string ddl = fmt::format("CREATE TABLE IF NOT EXISTS {} (", table_name<Key>());
        auto add = [&](std::string_view column, const auto& value) {
            ddl += fmt::format("{} {}, ", column, sql_type<std::decay_t<decltype(value)>>());
        };
        const TunedRowOf<Key> row;
        row.key.visit(add);
        row.visit_values(add);
        ddl += fmt::format("origin TEXT NOT NULL, PRIMARY KEY ({})) WITHOUT ROWID", key_columns<Key>());
        return ddl;
    }();
    return text;
}

void create_schema(sqlite::Database& database) {
    database.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    for_each_table_key([&]<class Key>(std::type_identity<Key>) { database.execute(table_ddl<Key>()); });
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

std::vector<std::string> foreign_tables(sqlite::Database& database) {
    std::vector<std::string> ours{"meta"};
    for_each_table_key([&]<class Key>(std::type_identity<Key>) { ours.emplace_back(table_name<Key>()); });
    std::vector<std::string> foreign;
    auto tables = database.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
    while (tables->step()) {
        std::string name = tables->column_text(0);
        if (std::find(ours.begin(), ours.end(), name) == ours.end()) foreign.push_back(std::move(name));
    }
    return foreign;
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
    for_each_table_key([&]<class Key>(std::type_identity<Key>) {
        const std::string_view table = table_name<Key>();
        auto has_table = database.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1");
        has_table->bind(1, table);
        MQAJIT_CHECK_KIND(database, has_table->step() && has_table->column_int64(0) == 1,
                          "tuning database {} has no table {}; it was damaged or not written by mqajit: rebuild it "
                          "(`mqajit db build-system`) or move it aside", database.path().string(), table);
        try {
            (void)database.prepare(fmt::format("SELECT {} FROM {} LIMIT 0", select_columns<Key>(), table));
        } catch (const sqlite::SqliteError& e) {
            MQAJIT_FAIL(database, "tuning database {}'s table {} lacks columns this mqajit reads ({}); rebuild it or "
                        "move it aside", database.path().string(), table, e.sqlite_message());
        }
    });
}

std::optional<int> migrate_schema(sqlite::Database& database) {
    std::optional<int> migrated_from;
    sqlite::write_transaction(database, "migrating the schema", [&] {
        // NOTES: read inside the write transaction: another process may have migrated it meanwhile.
        const auto version = schema_version(database);
        if (!version || *version < 1 || *version >= kSchemaVersion) return;
        if (*version < 4) add_prefill_key_columns(database, *version);
        // Versions 3 and 5 added tables: the paged_mqa_logits and the mqa_topk one.
        for_each_table_key([&]<class Key>(std::type_identity<Key>) { database.execute(table_ddl<Key>()); });
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

void upsert_row(sqlite::Database& database, const TunedRow& row) { upsert_any_row(database, row); }
void upsert_row(sqlite::Database& database, const PagedTunedRow& row) { upsert_any_row(database, row); }
void upsert_row(sqlite::Database& database, const TopkTunedRow& row) { upsert_any_row(database, row); }

template <class Key>
std::vector<TunedRowOf<Key>> select_group(sqlite::Database& database, const Key& group) {
    static const std::string sql =
        fmt::format("SELECT {} FROM {} WHERE {}", select_columns<Key>(), table_name<Key>(), group_condition<Key>());
    auto statement = database.prepare(sql);
    int index = 1;
    group.visit([&](std::string_view column, const auto& value) {
        if (!is_length_column<Key>(column)) statement->bind(index++, value);
    });
    return read_rows<Key>(*statement);
}

template <class Key>
std::vector<Key> select_group_keys(sqlite::Database& database) {
    static const std::string sql = fmt::format("SELECT DISTINCT {0} FROM {1} ORDER BY {0}",
                                               fmt::join(group_column_names<Key>(), ", "), table_name<Key>());
    auto statement = database.prepare(sql);
    std::vector<Key> keys;
    while (statement->step()) {
        Key key;
        int column = 0;
        key.visit([&](std::string_view name, auto& value) {
            if (!is_length_column<Key>(name)) read_column(*statement, column++, value);
        });
        // NOTES: a group no mqajit could have written (a size that is not positive, a mode other
        // than 0 or 1: the file was edited or damaged) never serves, nor stands in as the nearest
        // SM count; `db check` names its rows. The lengths are not part of a group.
        Key probe = key;
        probe.visit([&](std::string_view name, auto& value) {
            if constexpr (!std::is_same_v<std::remove_cvref_t<decltype(value)>, std::string>) {
                if (is_length_column<Key>(name)) value = 1;
            }
        });
        if (key_problem(probe)) continue;
        keys.push_back(std::move(key));
    }
    return keys;
}

template <class Key>
std::vector<TunedRowOf<Key>> select_all(sqlite::Database& database) {
    static const std::string sql =
        fmt::format("SELECT {} FROM {} ORDER BY {}", select_columns<Key>(), table_name<Key>(), key_columns<Key>());
    return read_rows<Key>(*database.prepare(sql));
}

template <class Key>
std::int64_t count_rows(sqlite::Database& database) {
    static const std::string sql = fmt::format("SELECT count(*) FROM {}", table_name<Key>());
    auto statement = database.prepare(sql);
    statement->step();
    return statement->column_int64(0);
}

#define MQAJIT_ROW_TABLE_FOR(Key)                                                                    \
    template const std::string& table_ddl<Key>();                                                    \
    template std::vector<TunedRowOf<Key>> select_group(sqlite::Database&, const Key&);               \
    template std::vector<Key> select_group_keys<Key>(sqlite::Database&);                             \
    template std::vector<TunedRowOf<Key>> select_all<Key>(sqlite::Database&);                        \
    template std::int64_t count_rows<Key>(sqlite::Database&);
MQAJIT_ROW_TABLE_FOR(ShapeKey)
MQAJIT_ROW_TABLE_FOR(PagedShapeKey)
MQAJIT_ROW_TABLE_FOR(TopkShapeKey)
#undef MQAJIT_ROW_TABLE_FOR

}  // namespace mqajit::tuning
