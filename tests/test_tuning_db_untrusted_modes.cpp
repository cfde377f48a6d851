// The clean_logits mode column, the schema version 2 migration and the nearest-SM-count stand-in
// read untrusted input like every other reader: a mode column that is named twice, after a BOM,
// out of range or not a whole number is refused with file:line; a version 1 database holding text
// that is not UTF-8, a number out of range or no table migrates (or is refused) without breaking a
// reader; and a group planted in a database with a size or mode no mqajit writes never serves,
// nor stands in as the nearest SM count.

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/error_kind.hpp"
#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tools/common/report_data.hpp"
#include "tools/common/shapes.hpp"
#include "tools/common/tune_json.hpp"
#include "tuning_db/check.hpp"
#include "tuning_db/csv.hpp"
#include "tuning_db/group_choice.hpp"
#include "tuning_db/row_table.hpp"
#include "tuning_db/sqlite.hpp"
#include "tuning_db/tuning_db.hpp"

using namespace mqajit;
using namespace mqajit::testing;

namespace {

constexpr std::string_view kModeHeader = "gfx,cu_num,heads,head_dim,clean_logits,seq_len,seq_len_kv,backend,variant,us\n";
const std::string kVariant = "wgmma64x128x32_bkv64_r4_w2_lds4";

std::string mode_row(std::string_view mode) {
    return "sm_90a,132,32,128," + std::string(mode) + ",1024,8192,jit," + kVariant + ",11\n";
}

ShapeKey sm90_key(int cu_num, int clean_logits) {
    return {.arch = "sm_90a", .cu_num = cu_num, .heads = 32, .head_dim = 128, .clean_logits = clean_logits,
            .seq_len = 1024, .seq_len_kv = 8192};
}

std::string quoted(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

}  // namespace

TEST_CASE("tuning csv modes: the clean_logits column is checked like every number, after a BOM, named once") {
    // A BOM before a header that names the mode: the column is found, the row keeps its mode.
    const auto bom = tuning::parse_csv("\xef\xbb\xbf" + std::string(kModeHeader) + mode_row("0"), "bom.csv");
    CHECK(bom.problems.empty());
    REQUIRE(bom.rows.size() == 1);
    CHECK(bom.rows[0].key.clean_logits == 0);

    // Named twice: the file is refused at line 1, not read first-wins.
    const auto twice = tuning::parse_csv(
        "gfx,cu_num,heads,head_dim,clean_logits,seq_len,seq_len_kv,backend,variant,us,clean_logits\n"
        "sm_90a,132,32,128,0,1024,8192,jit," + kVariant + ",11,1\n", "twice.csv");
    CHECK(twice.rows.empty());
    REQUIRE(twice.problems.size() == 1);
    CHECK(twice.problems[0].place == "twice.csv:1");
    CHECK(twice.problems[0].message.find("columns 5 and 11 both name 'clean_logits'") != std::string::npos);

    // Out of int's range, a real, a sign and trailing text: each its own line's problem, nothing wraps.
    std::string text(kModeHeader);
    for (const char* mode : {"4294967297", "1.0", "-1", "1x", ""}) text += mode_row(mode);
    text += mode_row("1");
    const auto checked = tuning::parse_csv(text, "modes.csv");
    REQUIRE(checked.rows.size() == 1);
    CHECK(checked.rows[0].key.clean_logits == 1);
    REQUIRE(checked.problems.size() == 5);
    CHECK(checked.problems[0].place == "modes.csv:2");
    CHECK(checked.problems[0].message.find("clean_logits '4294967297' is out of range") != std::string::npos);
    CHECK(checked.problems[2].message.find("clean_logits is -1; it must be 0 or 1") != std::string::npos);
    CHECK(checked.problems[4].place == "modes.csv:6");

    // A mode column whose text is not UTF-8 refuses that line only.
    const auto latin1 = tuning::parse_csv(std::string(kModeHeader) + mode_row("\xe9") + mode_row("0"), "l1.csv");
    CHECK(latin1.rows.size() == 1);
    REQUIRE(latin1.problems.size() == 1);
    CHECK(latin1.problems[0].message.find("not valid UTF-8") != std::string::npos);
}

TEST_CASE("tools modes: the shapes file, bench JSON and tune JSON refuse a mode that is not 0 or 1") {
    TempDir dir("tool-modes");
    const auto shapes = dir.path() / "shapes.csv";
    write_text(shapes, "\xef\xbb\xbfseq_len,seq_len_kv,clean_logits\n256,4096,0\n1024,4096,\n");
    const auto read = tools::read_shapes_csv(shapes);
    REQUIRE(read.size() == 2);
    CHECK(read[0].clean_logits == 0);
    CHECK_FALSE(read[1].clean_logits.has_value());
    for (const char* mode : {"2", "01", "4294967297", "1.0"}) {
        CAPTURE(mode);
        write_text(shapes, std::string("seq_len,seq_len_kv,clean_logits\n256,4096,") + mode + "\n");
        CHECK(error_kind_of([&] { tools::read_shapes_csv(shapes); }) == ErrorKind::invalid_argument);
    }
    write_text(shapes, "seq_len,seq_len_kv,clean_logits,clean_logits\n256,4096,0,1\n");
    CHECK(error_kind_of([&] { tools::read_shapes_csv(shapes); }) == ErrorKind::invalid_argument);

    const auto bench = dir.path() / "bench.json";
    for (const char* mode : {"4294967297", "1.5", "\"1\"", "2"}) {
        CAPTURE(mode);
        write_text(bench, std::string(R"([{"clean_logits": )") + mode +
                              R"(, "heads": 32, "head_dim": 128, "seq_len": 256, "seq_len_kv": 4096, "flops": 1,
                                 "baseline_us": 2, "variants_us": {"V": 1}}])");
        CHECK(error_kind_of([&] { tools::read_bench_json(bench); }) == ErrorKind::invalid_argument);
    }

    const nlohmann::json good = nlohmann::json::parse(
        R"([{"arch": "sm_90a", "cu_num": 132, "heads": 32, "head_dim": 128, "clean_logits": 0, "seq_len": 256,
             "seq_len_kv": 4096}])");
    CHECK(tools::merge_tune_json(good, good).size() == 1);
    for (const char* mode : {"4294967297", "0.5", "\"0\""}) {
        CAPTURE(mode);
        const nlohmann::json bad = nlohmann::json::parse(
            std::string(R"([{"arch": "sm_90a", "cu_num": 132, "heads": 32, "head_dim": 128, "clean_logits": )") + mode +
            R"(, "seq_len": 256, "seq_len_kv": 4096}])");
        CHECK(error_kind_of([&] { (void)tools::merge_tune_json(good, bad); }) == ErrorKind::invalid_argument);
    }
}

TEST_CASE("tuning user db migration: a version 1 file's damaged text and numbers migrate without breaking a reader") {
    TempDir dir("migrate-damaged");
    const auto file = dir.path() / "tuning.db";
    make_version_1_db(file);
    {
        sqlite::Database database(file, sqlite::OpenMode::read_write);
        database.execute("UPDATE tuned_mqa_logits SET runner_up = CAST(X'636166E9' AS TEXT) WHERE seq_len = 1024;"
                         "UPDATE tuned_mqa_logits SET cu_num = 4294967428 WHERE seq_len = 4096");
    }
    {
        LogCapture capture;
        TuningDb db(std::nullopt, file);
        CHECK_FALSE(db.user_db_in_memory());
        CHECK(capture.count("from schema version 1 to 5") == 1);
        const auto rows = db.user_rows();
        REQUIRE(rows.size() == 2);
        for (const TunedRow& row : rows) {
            CHECK(valid_utf8(row.runner_up));
            // The planted cu_num reads as 0 (out of int's range), a size no row may have.
            CHECK(row.key.cu_num == (row.key.seq_len == 4096 ? 0 : 132));
        }
        // The nearest SM count to 1 is 132, never the damaged row's 0.
        const TunedRow* found = db.lookup({.arch = "sm_90a", .cu_num = 1, .heads = 32, .head_dim = 128,
                                           .clean_logits = 1, .seq_len = 4096, .seq_len_kv = 8192});
        REQUIRE(found != nullptr);
        CHECK(found->key.cu_num == 132);
        CHECK(found->variant == kVariant);
    }
    // `db check` names both damaged rows; `db list --json` prints valid JSON.
    const std::string cli = "(env -u MQAJIT_TUNING_DB -u MQAJIT_SYSTEM_DB " + quoted(cli_path()) + " db --db " +
                            quoted(file) + " --system-db " + quoted(dir.path() / "none.db") + " ";
    std::string output;
    CHECK(run_command(cli + "check 2>&1)", &output) == 1);
    CHECK(output.find("not valid UTF-8") != std::string::npos);
    CHECK(output.find("cu_num is 0; sizes must be positive") != std::string::npos);
    CHECK(run_command(cli + "list --json --user-only 2>/dev/null)", &output) == 0);
    CHECK(nlohmann::json::accept(output));
}

TEST_CASE("tuning user db migration: a version 1 file without its table, or with a version that is no number, is "
          "not read, and the reading commands say so") {
    TempDir dir("migrate-refused");
    const auto no_table = dir.path() / "no_table.db";
    make_version_1_db(no_table);
    {
        sqlite::Database database(no_table, sqlite::OpenMode::read_write);
        database.execute("DROP TABLE tuned_mqa_logits");
    }
    const auto bad_version = dir.path() / "bad_version.db";
    make_version_1_db(bad_version);
    {
        sqlite::Database database(bad_version, sqlite::OpenMode::read_write);
        tuning::set_meta(database, "schema_version", "1abc");
    }
    for (const auto& file : {no_table, bad_version}) {
        CAPTURE(file);
        {
            LogCapture capture;
            TuningDb db(std::nullopt, file);
            CHECK(db.user_db_in_memory());
            CHECK(db.user_db_read_problem().has_value());
            CHECK(capture.warnings() == 1);
            CHECK(capture.count(file.string()) >= 1);
            CHECK(capture.count("from schema version 1 to 2") == 0);
        }
        std::string output;
        CHECK(run_command("env -u MQAJIT_TUNING_DB -u MQAJIT_SYSTEM_DB " + quoted(cli_path()) + " db --db " +
                              quoted(file) + " --system-db " + quoted(dir.path() / "none.db") +
                              " list --user-only 2>&1",
                          &output) == 1);
        CHECK(output.find("cannot read the user tuning database " + file.string()) != std::string::npos);
    }
    // The table-less file kept its version: nothing was half-migrated.
    sqlite::Database database(no_table, sqlite::OpenMode::read_only);
    CHECK(tuning::schema_version(database) == 1);
}

TEST_CASE("tuning lookup: a group planted with a size or mode no mqajit writes never serves, nor stands in as the "
          "nearest SM count") {
    TempDir dir("planted-groups");
    const auto file = dir.path() / "tuning.db";
    const std::string planted = "wgmma64x128x32_bkv128_r4_w2_lds4";
    {
        TuningDb db(std::nullopt, file);
        db.insert(make_row("sm_90a", 132, 32, 128, 1024, 8192, kVariant, 11));
        for (int cu_num : {1, 2, 3}) db.insert(make_row("sm_90a", cu_num, 32, 128, 1024, 8192, planted, 11));
    }
    // Before: SM count -1 stood in for a call at 1 SM, a mode-7 group at 2 SMs took a call at 2 SMs
    // (and then served nothing), and INT_MIN overflowed the distance to the call's SM count
    // (undefined behaviour, which UBSan reports).
    {
        sqlite::Database database(file, sqlite::OpenMode::read_write);
        database.execute(fmt::format("UPDATE {0} SET cu_num = -1 WHERE cu_num = 1; UPDATE {0} SET clean_logits = 7 "
                                     "WHERE cu_num = 2; UPDATE {0} SET cu_num = -2147483648 WHERE cu_num = 3",
                                     ShapeKey::kOp.table));
    }
    TuningDb db(std::nullopt, file);
    for (int cu_num : {1, 2, 100}) {
        CAPTURE(cu_num);
        const TunedRow* row = db.lookup(sm90_key(cu_num, 1));
        REQUIRE(row != nullptr);
        CHECK(row->key.cu_num == 132);
        CHECK(row->variant == kVariant);
    }
    const LookupResult explained = db.explain(sm90_key(100, 0));
    REQUIRE(explained.row.has_value());
    CHECK(explained.row->key.cu_num == 132);
    for (const std::string& step : explained.fallbacks) CHECK(step.find("-2147483648") == std::string::npos);
    // `db check` names the planted rows.
    std::vector<TunedRow> rows = db.user_rows();
    CHECK(std::ranges::count_if(rows, [](const TunedRow& row) { return row_problem(row).has_value(); }) == 3);

    // Only the planted groups: nothing serves.
    {
        sqlite::Database database(file, sqlite::OpenMode::read_write);
        database.execute(fmt::format("DELETE FROM {} WHERE cu_num = 132", ShapeKey::kOp.table));
    }
    TuningDb planted_only(std::nullopt, file);
    for (int cu_num : {1, 2, INT_MAX}) CHECK(planted_only.lookup(sm90_key(cu_num, 1)) == nullptr);
}

TEST_CASE("group choice: the nearest SM count's distance does not overflow at int's ends") {
    const std::vector<ShapeKey> tuned = {
        {.arch = "sm_90a", .cu_num = 1, .heads = 32, .head_dim = 128, .clean_logits = 1},
        {.arch = "sm_90a", .cu_num = INT_MAX, .heads = 32, .head_dim = 128, .clean_logits = 1}};
    auto nearest_to = [&](int cu_num) {
        const ShapeKey wanted{.arch = "sm_90a", .cu_num = cu_num, .heads = 32, .head_dim = 128, .clean_logits = 1};
        const auto choice = tuning::choose_group(wanted, tuned, true);
        REQUIRE(choice.group.has_value());
        return choice.group->cu_num;
    };
    CHECK(nearest_to(INT_MIN) == 1);
    CHECK(nearest_to(INT_MAX - 1) == INT_MAX);
    CHECK(nearest_to(2) == 1);
}

TEST_CASE("tuning explain: a group whose rows do not read back under its key explains the baseline, no crash") {
    // Found by fuzz_user_db: a cu_num stored as 132.5 lists as group 132, whose rows (WHERE cu_num = 132)
    // are none; explain dereferenced the missing row.
    TempDir dir("unreadable-group");
    const auto file = dir.path() / "tuning.db";
    {
        TuningDb db(std::nullopt, file);
        db.insert(make_row("sm_90a", 132, 32, 128, 1024, 8192, kVariant, 11));
    }
    {
        sqlite::Database database(file, sqlite::OpenMode::read_write);
        database.execute(fmt::format("UPDATE {} SET cu_num = 132.5", ShapeKey::kOp.table));
    }
    TuningDb db(std::nullopt, file);
    CHECK(db.lookup(sm90_key(132, 1)) == nullptr);
    const LookupResult explained = db.explain(sm90_key(132, 1));
    CHECK_FALSE(explained.row.has_value());
    REQUIRE(explained.steps.size() >= 2);
    CHECK(explained.steps.front().find("none of its rows reads back under that key") != std::string::npos);
    CHECK(explained.steps.back().find("baseline kernel") != std::string::npos);
}

TEST_CASE("tuning lookup: a listed group whose rows do not read back is passed over for the next group that serves") {
    // Before: such a group at the nearest SM count, or in the call's own mode, was chosen and served
    // nothing, so the call got the baseline kernel although a valid group could answer it.
    TempDir dir("unreadable-passed-over");
    const auto file = dir.path() / "tuning.db";
    const std::string farther = "wgmma64x128x32_bkv128_r4_w2_lds4";
    {
        TuningDb db(std::nullopt, file);
        db.insert(make_row("sm_90a", 120, 32, 128, 1024, 8192, kVariant, 11));
        db.insert(make_row("sm_90a", 132, 32, 128, 1024, 8192, farther, 12));
        TunedRow other_mode = make_row("sm_90a", 100, 32, 128, 1024, 8192, farther, 13);
        other_mode.key.clean_logits = 1;
        TunedRow own_mode = make_row("sm_90a", 100, 32, 128, 1024, 8192, kVariant, 14);
        own_mode.key.clean_logits = 0;
        db.insert(other_mode);
        db.insert(own_mode);
    }
    {
        sqlite::Database database(file, sqlite::OpenMode::read_write);
        database.execute(fmt::format("UPDATE {0} SET cu_num = 120.5 WHERE cu_num = 120; "
                                     "UPDATE {0} SET cu_num = 100.5 WHERE cu_num = 100 AND clean_logits = 0",
                                     ShapeKey::kOp.table));
    }
    TuningDb db(std::nullopt, file);

    // SM count 118: 120 is nearest but unreadable, so 132 serves.
    const TunedRow* nearest = db.lookup(sm90_key(118, 1));
    REQUIRE(nearest != nullptr);
    CHECK(nearest->key.cu_num == 132);
    CHECK(nearest->variant == farther);
    const LookupResult explained = db.explain(sm90_key(118, 1));
    REQUIRE(explained.row.has_value());
    CHECK(explained.row->key.cu_num == 132);
    REQUIRE_FALSE(explained.steps.empty());
    CHECK(explained.steps.front().find("cu_num=120 ") != std::string::npos);
    CHECK(explained.steps.front().find("not used") != std::string::npos);

    // SM count 100, clean_logits=0: its own group is unreadable, so the clean_logits=1 rows serve.
    const TunedRow* other = db.lookup(sm90_key(100, 0));
    REQUIRE(other != nullptr);
    CHECK(other->key.cu_num == 100);
    CHECK(other->key.clean_logits == 1);
    CHECK(other->variant == farther);
}
