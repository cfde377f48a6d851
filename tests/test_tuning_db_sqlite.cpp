// The SQLite layer and the user database on disk: typed binds and errors that name the file, the
// schema (shape key as PRIMARY KEY, version in `meta`), creation on first write, a CSV round trip
// through a real file, and the unusable-file cases: corrupt, foreign schema, read-only, locked.

#include <doctest/doctest.h>

#include <unistd.h>

#include <sys/stat.h>

#include <fmt/format.h>

#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tuning_db/csv.hpp"
#include "tuning_db/row_table.hpp"
#include "tuning_db/sqlite.hpp"
#include "tuning_db/tuning_db.hpp"
#include "tuning_db/user_db.hpp"

using namespace mqajit;
using namespace mqajit::testing;

namespace {

constexpr std::string_view kVariant = "mfma32x32x64_bkv64_r1_w2_lds2";

std::string journal_mode(const std::filesystem::path& file) {
    sqlite::Database database(file, sqlite::OpenMode::read_only);
    auto statement = database.prepare("PRAGMA journal_mode");
    REQUIRE(statement->step());
    return statement->column_text(0);
}

void make_user_db(const std::filesystem::path& file, int num_rows) {
    TuningDb db(std::nullopt, file);
    for (int i = 1; i <= num_rows; ++i) db.insert(glm5_row(256 * i, 4096, std::string(kVariant)));
    REQUIRE_FALSE(db.user_db_in_memory());
}

}  // namespace

TEST_CASE("tuning sqlite: statements bind typed values and errors name the file") {
    TempDir dir("sqlite-basic");
    const auto file = dir.path() / "basic.db";
    sqlite::Database database(file, sqlite::OpenMode::read_write_create);
    database.execute("CREATE TABLE t (i INTEGER, d REAL, s TEXT, n REAL)");
    database.prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4)")
        ->bind(1, std::int64_t{1} << 40)
        .bind(2, 0.5)
        .bind(3, std::string_view("text, with comma"))
        .bind(4, std::optional<double>{})
        .run();
    const sqlite::Statement* first_use = nullptr;
    {
        auto select = database.prepare("SELECT i, d, s, n FROM t");
        first_use = &*select;
        REQUIRE(select->step());
        CHECK(select->column_int64(0) == std::int64_t{1} << 40);
        CHECK(select->column_double(1) == 0.5);
        CHECK(select->column_text(2) == "text, with comma");
        CHECK(select->is_null(3));
        CHECK_FALSE(select->step());
    }
    {
        // The cached statement is the same object, reset for reuse: it reads from the first row again.
        auto again = database.prepare("SELECT i, d, s, n FROM t");
        CHECK(&*again == first_use);
        REQUIRE(again->step());
        CHECK(again->column_double(1) == 0.5);
    }
    try {
        database.prepare("SELECT nope FROM t");
        FAIL("expected an error");
    } catch (const sqlite::SqliteError& e) {
        CHECK(e.kind() == ErrorKind::database);
        CHECK(std::string(e.what()).find(file.string()) != std::string::npos);
        CHECK(std::string(e.what()).find("no such column") != std::string::npos);
    }
    auto insert = database.prepare("INSERT INTO t (i) VALUES (?1)");
    CHECK_THROWS_AS(insert->bind(5, 1), sqlite::SqliteError);  // no parameter 5
    CHECK_THROWS_AS(sqlite::Database(dir.path() / "absent.db", sqlite::OpenMode::read_only), sqlite::SqliteError);
}

TEST_CASE("tuning sqlite: the shape key is the primary key and the schema version sits in meta") {
    TempDir dir("sqlite-schema");
    sqlite::Database database(dir.path() / "schema.db", sqlite::OpenMode::read_write_create);
    CHECK_FALSE(tuning::schema_version(database).has_value());
    tuning::create_schema(database);
    CHECK(tuning::schema_version(database) == tuning::kSchemaVersion);
    CHECK(tuning::table_ddl().find("PRIMARY KEY (arch, cu_num, heads, head_dim, clean_logits, logits_dtype, seq_len, "
                                   "seq_len_kv)") != std::string::npos);
    tuning::upsert_row(database, glm5_row(256, 4096, std::string(kVariant), 1.0));
    tuning::upsert_row(database, glm5_row(256, 4096, "mfma32x32x64_bkv128_r2_w4_lds3", 2.0));
    CHECK(tuning::count_rows(database) == 1);
    CHECK(tuning::select_all(database)[0].variant == "mfma32x32x64_bkv128_r2_w4_lds3");
    // A plain INSERT of the same key is refused by the table itself ...
    const std::string insert = "INSERT INTO tuned_mqa_logits (arch, cu_num, heads, head_dim, clean_logits, "
                               "logits_dtype, seq_len, seq_len_kv, backend, variant, us, runner_up, tuner_version, "
                               "compiler_version, driver_version, date, origin) VALUES ('gfx950', 256, 32, 128, {}, "
                               "'{}', 256, 4096, 'jit', 'x', 1, '', '', '', '', '', '')";
    CHECK_THROWS_AS(database.execute(fmt::format(fmt::runtime(insert), 1, "float32")), sqlite::SqliteError);
    CHECK(tuning::count_rows(database) == 1);
    // ... while the same shape in the other mode, or with the other logits dtype, is a row of its own.
    database.execute(fmt::format(fmt::runtime(insert), 0, "float32"));
    CHECK(tuning::count_rows(database) == 2);
    database.execute(fmt::format(fmt::runtime(insert), 1, "bfloat16"));
    CHECK(tuning::count_rows(database) == 3);
}

TEST_CASE("tuning user db: created on first write with its folders, in WAL mode") {
    TempDir dir("user-create");
    const auto file = dir.path() / "deep" / "er" / "tuning.db";
    TuningDb db(std::nullopt, file);
    CHECK(db.lookup(gfx950_key(32, 128, 1, 1, 1)) == nullptr);
    CHECK(db.user_rows().empty());
    CHECK_FALSE(std::filesystem::exists(file));  // reading does not create it
    db.insert(glm5_row(256, 4096, std::string(kVariant)));
    CHECK(std::filesystem::exists(file));
    CHECK_FALSE(db.user_db_in_memory());
    CHECK(journal_mode(file) == "wal");
    sqlite::Database check(file, sqlite::OpenMode::read_only);
    CHECK(tuning::count_rows(check) == 1);
}

TEST_CASE("tuning user db: CSV import and export round trip through a file on disk") {
    TempDir dir("user-roundtrip");
    const auto file = dir.path() / "tuning.db";
    std::string csv = std::string(kCsvHeader);
    for (int s : {256, 1024, 2048})
        for (int n : {4096, 8192}) csv += fmt::format("gfx950,256,32,128,{},{},flydsl,{},{}\n", s, n, kVariant, s * 0.013 + n);
    csv += "sm_90a,132,64,128,1024,65536,jit,wgmma64x128x32_bkv128_r4_w2_lds3,77.125\n";
    const auto parsed = tuning::parse_csv(csv, "in.csv");
    REQUIRE(parsed.problems.empty());
    REQUIRE(parsed.rows.size() == 7);
    {
        TuningDb db(std::nullopt, file);
        db.insert(parsed.rows);
    }
    std::vector<TunedRow> stored;
    {
        TuningDb reopened(std::nullopt, file);
        stored = reopened.user_rows();
        tuning::write_csv_file(dir.path() / "out.csv", stored);
    }
    REQUIRE(stored.size() == parsed.rows.size());
    const auto exported = tuning::read_csv_file(dir.path() / "out.csv");
    REQUIRE(exported.problems.empty());
    auto by_key = [](const TunedRow& a, const TunedRow& b) { return a.key < b.key; };
    auto expected = parsed.rows;
    std::ranges::sort(expected, by_key);
    auto got = exported.rows;
    std::ranges::sort(got, by_key);
    for (std::size_t i = 0; i < expected.size(); ++i) {
        CHECK(tuning::csv_line(got[i]) == tuning::csv_line(expected[i]));
        CHECK(got[i].us == expected[i].us);
        CHECK(stored[i].origin == "user:" + file.string());
    }
}

TEST_CASE("tuning user db: a corrupted file gives one warning, then memory, no crash, no lost row") {
    TempDir dir("user-corrupt");
    const auto file = dir.path() / "tuning.db";
    const std::string garbage = "this is not an SQLite database\x01\x02\x03 but it is in the way" + std::string(4000, 'x');
    write_text(file, garbage);
    LogCapture capture;
    TuningDb db(std::nullopt, file);
    CHECK(db.lookup(gfx950_key(32, 128, 1, 256, 4096)) == nullptr);
    CHECK(db.user_db_in_memory());
    db.insert(glm5_row(256, 4096, std::string(kVariant)));
    db.insert(glm5_row(512, 4096, std::string(kVariant)));
    const TunedRow* row = db.lookup(gfx950_key(32, 128, 1, 256, 4096));
    REQUIRE(row != nullptr);
    CHECK(row->variant == kVariant);
    CHECK(db.user_rows().size() == 2);
    CHECK(capture.warnings() == 1);
    CHECK(capture.text().find(file.string()) != std::string::npos);
    CHECK(capture.text().find("not a database") != std::string::npos);
    CHECK(read_text(file) == garbage);  // never overwritten
}

// Found by fuzz_user_db: a file whose damaged page shows only when the group is read again after a
// successful insert. The fallback used to start an empty memory database, losing the row just written.
// NOTES: the seed found was a schema-2 file; migrating it rebuilds the prefill table from its readable
// rows, which heals it, so the test runs on a schema-4 file with the same damage (the page's cell
// content area said to start past both of its cells). Schema 5 added a table, which opening it adds
// first (one warning of its own) without touching the damaged page.
TEST_CASE("tuning user db: a file found damaged after a write keeps this process's rows in memory") {
    TempDir dir("user-damaged-after-write");
    const auto file = dir.path() / "tuning.db";
    std::filesystem::copy_file(std::filesystem::path(MQAJIT_SOURCE_DIR) / "fuzz/corpus/fuzz_user_db/damaged_tree_page_v4.db",
                               file);
    LogCapture capture;
    TuningDb db(std::nullopt, file);
    const TunedRow written = make_row("gfx950", 256, 32, 128, 4096, 65536, "mfma32x32x64_bkv64_r2_w4_lds3", 12.5);
    CHECK(db.lookup(written.key) != nullptr);  // another row of the group answers before the insert
    db.insert(written);
    const TunedRow* row = db.lookup(written.key);
    REQUIRE(row != nullptr);
    CHECK(row->key == written.key);
    CHECK(row->variant == written.variant);
    CHECK(db.user_db_in_memory());
    CHECK(capture.warnings() == 2);
    CHECK(capture.count("from schema version 4 to 5 (which adds the mqa_topk table)") == 1);
    CHECK(capture.count("is damaged or not an SQLite database") == 1);
}

TEST_CASE("tuning user db: a database of another schema version is left alone with one warning") {
    TempDir dir("user-version");
    const auto file = dir.path() / "tuning.db";
    make_user_db(file, 2);
    {
        sqlite::Database database(file, sqlite::OpenMode::read_write);
        tuning::set_meta(database, "schema_version", "99");
    }
    LogCapture capture;
    TuningDb db(std::nullopt, file);
    CHECK(db.user_db_in_memory());
    CHECK(db.user_rows().empty());
    db.insert(glm5_row(256, 8192, std::string(kVariant)));
    CHECK(capture.warnings() == 1);
    CHECK(capture.text().find("schema version 99") != std::string::npos);
    sqlite::Database database(file, sqlite::OpenMode::read_only);
    CHECK(tuning::count_rows(database) == 2);
}

TEST_CASE("tuning user db: a locked file falls back after bounded retries, with one warning") {
    TempDir dir("user-locked");
    const auto file = dir.path() / "tuning.db";
    make_user_db(file, 1);
    sqlite::Database holder(file, sqlite::OpenMode::read_write);
    holder.execute("BEGIN EXCLUSIVE");
    LogCapture capture;
    tuning::UserDb user(file, std::chrono::milliseconds(20));
    const auto start = std::chrono::steady_clock::now();
    user.insert(std::vector{glm5_row(512, 4096, std::string(kVariant))});
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    CHECK(user.in_memory());
    CHECK(user.all_rows().size() == 2);  // the file's row and the new one, in memory
    CHECK(capture.warnings() == 1);
    CHECK(capture.text().find("locked") != std::string::npos);
    holder.execute("ROLLBACK");
}

namespace {

// Runs as a child so it can drop root (root ignores file permissions) before opening the file.
int read_only_child(const std::vector<std::string>& args) {
    if (geteuid() == 0 && setuid(65534) != 0) return 10;
    const std::filesystem::path file = args.at(0);
    LogCapture capture;
    TuningDb db(std::nullopt, file);
    if (!db.user_db_in_memory()) return 11;
    const TunedRow* old_row = db.lookup(gfx950_key(32, 128, 1, 512, 4096));
    if (old_row == nullptr || old_row->key.seq_len != 512) return 12;  // the file's rows still serve
    db.insert(glm5_row(4096, 4096, "mfma32x32x64_bkv128_r2_w4_lds3"));
    const TunedRow* new_row = db.lookup(gfx950_key(32, 128, 1, 5000, 4096));
    if (new_row == nullptr || new_row->variant != "mfma32x32x64_bkv128_r2_w4_lds3") return 13;
    if (db.user_rows().size() != 4) return 14;
    if (capture.warnings() != 1) return 15;
    if (capture.text().find("read-only") == std::string::npos) return 16;
    return 0;
}
MQAJIT_TEST_CHILD("tuning_db_read_only", read_only_child);

}  // namespace

TEST_CASE("tuning user db: a read-only file keeps serving its rows, new rows stay in memory") {
    TempDir dir("user-readonly");
    const auto file = dir.path() / "tuning.db";
    make_user_db(file, 3);
    const std::string before = read_text(file);
    std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::group_read |
                                           std::filesystem::perms::others_read);
    std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                                 std::filesystem::perms::group_exec |
                                                 std::filesystem::perms::others_read |
                                                 std::filesystem::perms::others_exec);
    const auto codes = run_children("tuning_db_read_only", {file.string()}, 1);
    CHECK(codes == std::vector<int>{0});
    CHECK(read_text(file) == before);
}
