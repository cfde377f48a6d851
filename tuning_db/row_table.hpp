#pragma once
// The tuning tables inside an SQLite database, one per operator (ShapeKey::kOp.table,
// PagedShapeKey::kOp.table, TopkShapeKey::kOp.table): their schema (derived from the key's columns and
// TunedRowOf::visit_values), the `meta` table with the schema version, and row reads and writes.
// Shared by the read-only system database and the user database.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tuning_db/sqlite.hpp"
#include "tuning_db/tuned_row.hpp"

namespace mqajit::tuning {

// Version 2 added the clean_logits key column (version 1 rows are clean_logits=1 rows); version 3
// the paged_mqa_logits table; version 4 the prefill table's logits_dtype key column (older rows
// are float32 rows); version 5 the mqa_topk table.
inline constexpr int kSchemaVersion = 5;

// The CREATE TABLE statement of a key type's table; the key is its PRIMARY KEY.
template <class Key = ShapeKey>
const std::string& table_ddl();

// Creates the meta table and every operator's table if missing and records the schema version.
void create_schema(sqlite::Database& database);
// The version recorded in `meta`, or nullopt when the database has no meta table (a new file).
std::optional<int> schema_version(sqlite::Database& database);
// The tables of `database` that are not mqajit's (meta and the tuned tables): another program's
// file, which mqajit must not fill in or change.
std::vector<std::string> foreign_tables(sqlite::Database& database);
// Throws mqajit::Error(database) unless the database holds schema version kSchemaVersion; the
// message says what to do about an older or a newer one.
void require_schema(sqlite::Database& database);
// Brings a database of an older schema version that this mqajit can convert (1 to 4) to
// kSchemaVersion in one write transaction, keeping every row. Returns the version it migrated
// from, or nullopt when there was nothing to do (already current, or a version it cannot convert).
std::optional<int> migrate_schema(sqlite::Database& database);

void set_meta(sqlite::Database& database, std::string_view key, std::string_view value);
std::optional<std::string> meta(sqlite::Database& database, std::string_view key);

// Inserts the row into its operator's table, replacing any row with the same key.
void upsert_row(sqlite::Database& database, const TunedRow& row);
void upsert_row(sqlite::Database& database, const PagedTunedRow& row);
void upsert_row(sqlite::Database& database, const TopkTunedRow& row);

// The rows of `group`'s group (its lengths are ignored).
template <class Key>
std::vector<TunedRowOf<Key>> select_group(sqlite::Database& database, const Key& group);
// Every group that has rows, ordered, as keys whose lengths are 0.
template <class Key = ShapeKey>
std::vector<Key> select_group_keys(sqlite::Database& database);
template <class Key = ShapeKey>
std::vector<TunedRowOf<Key>> select_all(sqlite::Database& database);  // ordered by the key
template <class Key = ShapeKey>
std::int64_t count_rows(sqlite::Database& database);

}  // namespace mqajit::tuning
