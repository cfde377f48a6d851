// The clean_logits mode and the SM count in the tuning key: each mode's rows serve calls of that
// mode, the other mode's rows stand in where a mode has none, the nearest tuned SM count stands in
// for an untuned one (unless turned off), explain says which; old tables and databases read as
// clean_logits=1 rows (a version 1 user database is migrated); rows whose variant can't run on
// their arch are refused by the checks.

#include <map>
#include <set>
#include <tuple>

#include <doctest/doctest.h>

#include "core/settings.hpp"
#include "tests/error_kind.hpp"
#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tuning_db/check.hpp"
#include "tuning_db/csv.hpp"
#include "tuning_db/group_choice.hpp"
#include "tuning_db/row_table.hpp"
#include "tuning_db/sqlite.hpp"
#include "tuning_db/system_db.hpp"
#include "tuning_db/tuning_db.hpp"

using namespace mqajit;
using namespace mqajit::testing;

namespace {

// A group: a key whose lengths are 0.
ShapeKey group(int cu_num, int clean_logits, int heads = 32) {
    return {.arch = "sm_90a", .cu_num = cu_num, .heads = heads, .head_dim = 128, .clean_logits = clean_logits};
}

ShapeKey sm90_key(int cu_num, int clean_logits, std::int64_t seq_len, std::int64_t seq_len_kv, int heads = 32) {
    return {.arch = "sm_90a", .cu_num = cu_num, .heads = heads, .head_dim = 128, .clean_logits = clean_logits,
            .seq_len = seq_len, .seq_len_kv = seq_len_kv};
}

bool mentions(const std::vector<std::string>& lines, std::string_view needle) {
    return std::ranges::any_of(lines, [&](const std::string& line) { return line.find(needle) != std::string::npos; });
}

// H=32 rows: both modes at 132 SMs (different variants, so a wrong mode shows), only mode 1 at 114
// SMs; H=64 rows: only mode 1 at 132 SMs. Each variant is one the registry lets run there.
constexpr std::string_view kModesCsv =
    "gfx,cu_num,heads,head_dim,clean_logits,seq_len,seq_len_kv,backend,variant,us\n"
    "sm_90a,132,32,128,0,1024,8192,jit,wgmma64x128x32_bkv128_r4_w2_lds4,10\n"
    "sm_90a,132,32,128,1,1024,8192,jit,wgmma64x128x32_bkv64_r4_w2_lds4,11\n"
    "sm_90a,114,32,128,1,1024,8192,jit,wgmma64x128x32_bkv64_r4_w2_lds6,12\n"
    "sm_90a,132,64,128,1,1024,8192,jit,wgmma64x128x32_bkv128_r2_w2_lds4,13\n";

struct ModesFixture : SystemDbFixture {
    ModesFixture() : SystemDbFixture("modes", kModesCsv, 4) {}
};

std::string pick(const TuningDb& db, const ShapeKey& key) {
    const TunedRow* row = db.lookup(key);
    return row ? row->variant : "baseline";
}

}  // namespace

TEST_CASE("group choice: the call's own group, then its other mode, then the nearest SM count") {
    const std::vector<ShapeKey> tuned = {group(132, 0), group(132, 1), group(114, 1), group(100, 0), group(100, 1)};
    // Its own group: no fallback.
    auto choice = tuning::choose_group(group(114, 1), tuned, true);
    CHECK(choice.group == group(114, 1));
    CHECK(choice.fallbacks.empty());
    // The other mode at the same SM count comes before another SM count in the call's own mode.
    choice = tuning::choose_group(group(114, 0), tuned, true);
    CHECK(choice.group == group(114, 1));
    REQUIRE(choice.fallbacks.size() == 1);
    CHECK(choice.fallbacks[0].find("no rows tuned with clean_logits=0: the clean_logits=1 rows serve") !=
          std::string::npos);
    CHECK(choice.fallbacks[0].find("mqajit tune --clean-logits 0") != std::string::npos);
    // An untuned SM count: the nearest tuned one, in the call's mode.
    choice = tuning::choose_group(group(78, 0), tuned, true);
    CHECK(choice.group == group(100, 0));
    REQUIRE(choice.fallbacks.size() == 1);
    CHECK(choice.fallbacks[0].find("not tuned at cu_num 78: the nearest tuned cu_num, 100, serves (tuned: 100, 114, "
                                   "132; MQAJIT_NEAREST_CU_NUM=0 turns this off)") != std::string::npos);
    CHECK(tuning::choose_group(group(140, 1), tuned, true).group == group(132, 1));
    // A tie goes to the smaller SM count.
    CHECK(tuning::choose_group(group(107, 1), tuned, true).group == group(100, 1));
    CHECK(tuning::choose_group(group(123, 1), tuned, true).group == group(114, 1));
    // The nearest SM count lacks the call's mode: its other mode serves, and both fallbacks are said.
    choice = tuning::choose_group(group(120, 0), tuned, true);
    CHECK(choice.group == group(114, 1));
    CHECK(choice.fallbacks.size() == 2);
}

TEST_CASE("group choice: nearest SM count off, or nothing tuned for the arch, heads and head_dim") {
    const std::vector<ShapeKey> tuned = {group(132, 1), group(132, 0, 64)};
    auto choice = tuning::choose_group(group(114, 0), tuned, false);
    CHECK_FALSE(choice.group);
    CHECK(choice.fallbacks.empty());
    CHECK(choice.declined.find("tuned only at cu_num 132, not 114") != std::string::npos);
    CHECK(choice.declined.find("MQAJIT_NEAREST_CU_NUM is off") != std::string::npos);
    // The same device's other mode still serves with the nearest SM count off: it is not another SM count.
    CHECK(tuning::choose_group(group(132, 0), tuned, false).group == group(132, 1));
    // Other heads, head_dim or arch never stand in.
    CHECK_FALSE(tuning::choose_group(group(132, 0, 16), tuned, true).group);
    ShapeKey other_dim = group(132, 1);
    other_dim.head_dim = 64;
    CHECK_FALSE(tuning::choose_group(other_dim, tuned, true).group);
    ShapeKey other_arch = group(132, 1);
    other_arch.arch = "sm_100a";
    CHECK_FALSE(tuning::choose_group(other_arch, tuned, true).group);
    CHECK(tuning::choose_group(other_arch, tuned, true).declined.empty());
}

TEST_CASE("tuning lookup: each mode's rows serve that mode, the other mode's stand in, and explain says so") {
    ModesFixture fixture;
    TuningDb db(fixture.system_db, fixture.user_db);
    CHECK(pick(db, sm90_key(132, 0, 2048, 9000)) == "wgmma64x128x32_bkv128_r4_w2_lds4");
    CHECK(pick(db, sm90_key(132, 1, 2048, 9000)) == "wgmma64x128x32_bkv64_r4_w2_lds4");
    CHECK(pick(db, sm90_key(114, 1, 2048, 9000)) == "wgmma64x128x32_bkv64_r4_w2_lds6");

    const LookupResult own = db.explain(sm90_key(132, 0, 2048, 9000));
    CHECK(own.fallbacks.empty());
    CHECK(mentions(own.steps, "group arch=sm_90a cu_num=132 heads=32 head_dim=128 clean_logits=0 logits_dtype=float32: 1 tuned row(s)"));

    // H=64 has clean_logits=1 rows only: a clean_logits=0 call is served by them.
    CHECK(pick(db, sm90_key(132, 0, 2048, 9000, 64)) == "wgmma64x128x32_bkv128_r2_w2_lds4");
    const LookupResult other = db.explain(sm90_key(132, 0, 2048, 9000, 64));
    REQUIRE(other.row);
    CHECK(other.row->key.clean_logits == 1);
    REQUIRE(other.fallbacks.size() == 1);
    CHECK(mentions(other.steps, "no tuned rows for group arch=sm_90a cu_num=132 heads=64 head_dim=128 clean_logits=0"));
    CHECK(mentions(other.steps, other.fallbacks[0]));
    CHECK(mentions(other.steps, "group arch=sm_90a cu_num=132 heads=64 head_dim=128 clean_logits=1 logits_dtype=float32: 1 tuned row(s)"));
    CHECK(other.row->variant == pick(db, sm90_key(132, 1, 2048, 9000, 64)));
}

TEST_CASE("tuning lookup: an untuned SM count uses the nearest tuned one, unless turned off") {
    ModesFixture fixture;
    TuningDb db(fixture.system_db, fixture.user_db);
    // 120 SMs: 114 is nearer than 132; in mode 0 the 114-SM group has only mode 1 rows.
    CHECK(pick(db, sm90_key(120, 1, 1024, 8192)) == "wgmma64x128x32_bkv64_r4_w2_lds6");
    const LookupResult nearest = db.explain(sm90_key(120, 0, 1024, 8192));
    REQUIRE(nearest.row);
    CHECK(nearest.row->key.cu_num == 114);
    CHECK(nearest.fallbacks.size() == 2);
    CHECK(mentions(nearest.steps, "the nearest tuned cu_num, 114, serves (tuned: 114, 132;"));
    // 130 SMs: 132 is nearer, and it has both modes.
    CHECK(pick(db, sm90_key(130, 0, 1024, 8192)) == "wgmma64x128x32_bkv128_r4_w2_lds4");

    TuningDb exact(fixture.system_db, fixture.user_db, {.nearest_cu_num = false});
    CHECK(exact.lookup(sm90_key(120, 1, 1024, 8192)) == nullptr);
    const LookupResult declined = exact.explain(sm90_key(120, 1, 1024, 8192));
    CHECK_FALSE(declined.row);
    CHECK(declined.fallbacks.empty());
    CHECK(mentions(declined.steps, "no tuned rows for group arch=sm_90a cu_num=120"));
    CHECK(mentions(declined.steps, "tuned only at cu_num 114, 132, not 120"));
    CHECK(pick(exact, sm90_key(114, 1, 1024, 8192)) == "wgmma64x128x32_bkv64_r4_w2_lds6");  // exact still serves
}

TEST_CASE("tuning lookup: a row of a new mode or SM count takes over from the stand-in at once") {
    ModesFixture fixture;
    TuningDb db(fixture.system_db, fixture.user_db);
    const TunedRow* stand_in = db.lookup(sm90_key(132, 0, 1024, 8192, 64));
    REQUIRE(stand_in != nullptr);
    CHECK(stand_in->key.clean_logits == 1);
    const TunedRow* nearest = db.lookup(sm90_key(120, 1, 1024, 8192));
    REQUIRE(nearest != nullptr);

    TunedRow own_mode = make_row("sm_90a", 132, 64, 128, 1024, 8192, "wgmma64x128x32_bkv64_r2_w2_lds6", 9);
    own_mode.key.clean_logits = 0;
    TunedRow own_sms = make_row("sm_90a", 120, 32, 128, 1024, 8192, "wgmma64x128x32_bkv128_r4_w1_lds4", 9);
    db.insert(std::vector{own_mode, own_sms});
    CHECK(pick(db, sm90_key(132, 0, 1024, 8192, 64)) == "wgmma64x128x32_bkv64_r2_w2_lds6");
    CHECK(db.explain(sm90_key(132, 0, 1024, 8192, 64)).fallbacks.empty());
    CHECK(pick(db, sm90_key(120, 1, 1024, 8192)) == "wgmma64x128x32_bkv128_r4_w1_lds4");
    // The other mode's own answer is unchanged, and pointers handed out before stay valid.
    CHECK(pick(db, sm90_key(132, 1, 1024, 8192, 64)) == "wgmma64x128x32_bkv128_r2_w2_lds4");
    CHECK(stand_in->variant == "wgmma64x128x32_bkv128_r2_w2_lds4");
    CHECK(nearest->variant == "wgmma64x128x32_bkv64_r4_w2_lds6");
}

TEST_CASE("tuning csv: the clean_logits column is read and written, and a table without it holds clean_logits=1 rows") {
    CHECK(tuning::csv_header().starts_with("gfx,cu_num,heads,head_dim,clean_logits,logits_dtype,seq_len,seq_len_kv,"));
    const auto with = tuning::parse_csv(kModesCsv, "with.csv");
    REQUIRE(with.problems.empty());
    REQUIRE(with.rows.size() == 4);
    CHECK(with.rows[0].key.clean_logits == 0);
    CHECK(with.rows[1].key.clean_logits == 1);
    CHECK(tuning::csv_line(with.rows[0]).starts_with("sm_90a,132,32,128,0,float32,1024,8192,jit,"));
    const auto without = tuning::parse_csv("gfx,cu_num,heads,head_dim,seq_len,seq_len_kv,backend,variant,us\n"
                                           "sm_90a,132,32,128,1024,8192,jit,wgmma64x128x32_bkv64_r4_w2_lds4,11\n",
                                           "without.csv");
    REQUIRE(without.rows.size() == 1);
    CHECK(without.rows[0].key.clean_logits == kCleanLogitsWithoutColumn);
    CHECK(kCleanLogitsWithoutColumn == 1);
    const auto bad = tuning::parse_csv("gfx,cu_num,heads,head_dim,clean_logits,seq_len,seq_len_kv,backend,variant,us\n"
                                       "sm_90a,132,32,128,2,1024,8192,jit,wgmma64x128x32_bkv64_r4_w2_lds4,11\n"
                                       "sm_90a,132,32,128,yes,1024,8192,jit,wgmma64x128x32_bkv64_r4_w2_lds4,11\n"
                                       "sm_90a,132,32,128,1,1024,8192,jit,wgmma64x128x32_bkv64_r4_w2_lds4,11\n",
                                       "bad.csv");
    CHECK(bad.rows.size() == 1);
    REQUIRE(bad.problems.size() == 2);
    CHECK(bad.problems[0].place == "bad.csv:2");
    CHECK(bad.problems[0].message.find("clean_logits is 2; it must be 0 or 1") != std::string::npos);
    CHECK(bad.problems[1].message.find("clean_logits 'yes' is not a whole number") != std::string::npos);
}

TEST_CASE("tuning csv: the shipped tuned tables carry the mode column, sm_90a shapes come in both modes") {
    std::size_t sm90_shapes = 0;
    for (const auto& file : tuning::shipped_config_files(shipped_configs_dir())) {
        CAPTURE(file);
        CHECK(read_text(file).starts_with("gfx,cu_num,heads,head_dim,clean_logits,seq_len,seq_len_kv,"));
        const auto table = tuning::read_csv_file(file);
        CHECK(table.problems.empty());
        // Every sm_90a shape is tuned in each mode (a clean_logits=0 call is served by a row timed that
        // way); the gfx950 rows were tuned before the mode existed and are clean_logits=1 rows.
        std::map<std::tuple<int, int, int>, std::set<int>> modes;
        for (const TunedRow& row : table.rows) {
            if (row.key.arch != "sm_90a") {
                CHECK(row.key.clean_logits == 1);
                continue;
            }
            modes[{row.key.heads, row.key.seq_len, row.key.seq_len_kv}].insert(row.key.clean_logits);
        }
        for (const auto& [shape, seen] : modes) {
            CAPTURE(std::get<1>(shape));
            CAPTURE(std::get<2>(shape));
            CHECK(seen == std::set<int>{0, 1});
        }
        sm90_shapes += modes.size();
    }
    CHECK(sm90_shapes == 45);  // GLM-5's 24 and DeepSeek-V3.2's 21
}

TEST_CASE("tuning user db: a version 1 database is migrated in place, its rows becoming clean_logits=1 rows") {
    TempDir dir("migrate");
    const auto file = dir.path() / "tuning.db";
    make_version_1_db(file);
    {
        LogCapture capture;
        TuningDb db(std::nullopt, file);
        CHECK_FALSE(db.user_db_in_memory());
        CHECK(capture.warnings() == 1);
        CHECK(capture.count("migrated user tuning database " + file.string() + " from schema version 1 to 5") == 1);
        CHECK(capture.count("its 2 prefill row(s) are clean_logits=1 float32 rows") == 1);
        const auto rows = db.user_rows();
        REQUIRE(rows.size() == 2);
        CHECK(rows[0].key == sm90_key(132, 1, 1024, 8192));
        CHECK(rows[0].variant == "wgmma64x128x32_bkv64_r4_w2_lds4");
        CHECK(rows[0].us == 11.5);
        CHECK(rows[0].baseline_us == 20.25);
        CHECK(rows[0].compiler_version == "nvrtc 13.0");
        CHECK_FALSE(rows[1].baseline_us);
        // Lookups in either mode find them (mode 0 through the stand-in rule).
        CHECK(pick(db, sm90_key(132, 1, 2000, 8192)) == "wgmma64x128x32_bkv64_r4_w2_lds4");
        CHECK(pick(db, sm90_key(132, 0, 5000, 8192)) == "baseline");
        db.insert(make_row("sm_90a", 132, 32, 128, 256, 8192, "wgmma64x128x32_bkv128_r4_w2_lds4", 5));
    }
    sqlite::Database database(file, sqlite::OpenMode::read_only);
    CHECK(tuning::schema_version(database) == tuning::kSchemaVersion);
    CHECK(tuning::count_rows(database) == 3);
    CHECK(tuning::table_ddl().find("clean_logits") != std::string::npos);
    {
        LogCapture capture;  // a second open has nothing to migrate
        TuningDb again(std::nullopt, file);
        CHECK(again.user_rows().size() == 3);
        CHECK(capture.warnings() == 0);
    }
    sqlite::Database writable(file, sqlite::OpenMode::read_write);
    CHECK_FALSE(tuning::migrate_schema(writable).has_value());
}

TEST_CASE("tuning db: an old or a newer schema version is refused with what to do") {
    TempDir dir("schema-message");
    const auto old_file = dir.path() / "old.db";
    make_version_1_db(old_file);
    try {
        tuning::SystemDb system(old_file);
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::database);
        const std::string text = e.what();
        CHECK(text.find("schema version 1, older than the version 5") != std::string::npos);
        CHECK(text.find("mqajit db build-system") != std::string::npos);
    }
    const auto new_file = dir.path() / "new.db";
    {
        sqlite::Database database(new_file, sqlite::OpenMode::read_write_create);
        tuning::create_schema(database);
        tuning::set_meta(database, "schema_version", "7");
    }
    LogCapture capture;
    TuningDb db(std::nullopt, new_file);
    CHECK(db.user_db_in_memory());
    CHECK(capture.count("schema version 7, newer than the version 5 this mqajit reads") == 1);
}

TEST_CASE("tuning check: a row whose variant cannot run on its arch is refused, baseline rows always run") {
    const TunedRow runs = make_row("sm_90a", 132, 32, 128, 1, 1, "wgmma64x128x32_bkv64_r4_w2_lds4", 1);
    CHECK_FALSE(tuning::unrunnable_problem(runs));
    CHECK_FALSE(tuning::unrunnable_problem(make_row("gfx950", 256, 32, 128, 1, 1, "baseline", 1)));
    const auto amd_on_nvidia =
        tuning::unrunnable_problem(make_row("sm_90a", 132, 32, 128, 1, 1, "mfma32x32x64_bkv64_r1_w2_lds2", 1));
    REQUIRE(amd_on_nvidia);
    CHECK(amd_on_nvidia->find("variant mfma32x32x64_bkv64_r1_w2_lds2 cannot run on sm_90a") != std::string::npos);
    const auto wrong_heads =
        tuning::unrunnable_problem(make_row("sm_90a", 132, 64, 128, 1, 1, "wgmma64x128x32_bkv64_r4_w2_lds4", 1));
    REQUIRE(wrong_heads);
    CHECK(wrong_heads->find("N=128 must equal r x heads = 4 x 64 = 256") != std::string::npos);
    CHECK(tuning::unrunnable_problem(make_row("sm_80", 108, 32, 128, 1, 1, "wgmma64x128x32_bkv64_r4_w2_lds4", 1)));

    std::vector<TunedRow> rows = {runs, make_row("sm_90a", 132, 64, 128, 1, 1, "wgmma64x128x32_bkv64_r4_w2_lds4", 1)};
    rows[1].origin = "x.csv:3";
    std::vector<tuning::RowProblem> problems;
    tuning::drop_unrunnable(rows, problems);
    CHECK(rows.size() == 1);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].place == "x.csv:3");
    CHECK(problems[0].message.ends_with("; row skipped"));

    TempDir dir("check-runs");
    write_text(dir.path() / "t.csv", std::string(kCsvHeader) +
                                         "sm_90a,132,32,128,1,1,jit,wgmma64x128x32_bkv64_r4_w2_lds4,1\n"
                                         "sm_90a,132,32,128,2,1,jit,mfma32x32x64_bkv64_r1_w2_lds2,1\n");
    tuning::CheckReport report = tuning::check_config_files({dir.path() / "t.csv"});
    CHECK_FALSE(report.ok());
    REQUIRE(report.problems.size() == 1);
    CHECK(report.problems[0].place == (dir.path() / "t.csv").string() + ":3");
    tuning::CheckReport user;
    tuning::check_rows({make_row("gfx942", 304, 32, 128, 1, 1, "wgmma64x128x32_bkv64_r4_w2_lds4", 1)}, user);
    CHECK(user.problems.size() == 1);
}

TEST_CASE("settings: MQAJIT_NEAREST_CU_NUM turns the nearest SM count off, and is parsed strictly") {
    auto with = [](std::optional<std::string> value) {
        return Settings::from_environment([value](std::string_view name) -> std::optional<std::string> {
            if (name == "MQAJIT_NEAREST_CU_NUM") return value;
            return std::nullopt;
        });
    };
    CHECK(with(std::nullopt).nearest_cu_num);
    CHECK(with("1").nearest_cu_num);
    CHECK_FALSE(with("0").nearest_cu_num);
    CHECK_FALSE(with("off").nearest_cu_num);
    CHECK(error_kind_of([&] { (void)with("nearest"); }) == ErrorKind::invalid_argument);
}
