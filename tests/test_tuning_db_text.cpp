// Text in tuning tables is UTF-8: a CSV line that is not is refused with file:line (so it never
// reaches the database), a UTF-8 byte-order mark is read past, a column named twice is an error; and
// a row planted in the database with other bytes cannot break `db list --json`, `db lookup --json`
// or the rows handed to Python.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tuning_db/csv.hpp"
#include "tuning_db/sqlite.hpp"
#include "tuning_db/tuning_db.hpp"

using namespace mqajit;
using namespace mqajit::testing;

namespace {

const std::string kRow = "gfx950,256,32,128,256,4096,flydsl,mfma32x32x64_bkv64_r1_w2_lds2,18.4";

std::string quoted(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

}  // namespace

TEST_CASE("tuning csv text: a line that is not UTF-8 is skipped with its file:line") {
    const std::string header = "gfx,cu_num,heads,head_dim,seq_len,seq_len_kv,backend,variant,us,runner_up\n";
    const std::string text = header + kRow + ",caf\xe9\n" +
                             "gfx950,256,32,128,1024,4096,flydsl,mfma32x32x64_bkv64_r2_w2_lds3,20.0,caf\xc3\xa9\n";
    const tuning::CsvRows parsed = tuning::parse_csv(text, "latin1.csv");
    REQUIRE(parsed.rows.size() == 1);
    CHECK(parsed.rows[0].runner_up == "caf\xc3\xa9");
    REQUIRE(parsed.problems.size() == 1);
    CHECK(parsed.problems[0].place == "latin1.csv:2");
    CHECK(parsed.problems[0].message.find("not valid UTF-8") != std::string::npos);
    CHECK(parsed.problems[0].message.find("0xE9") != std::string::npos);

    // Overlong forms, surrogates and truncated sequences are not UTF-8 either.
    for (const char* bad : {"\xc0\xaf", "\xed\xa0\x80", "\xe2\x82", "\xf8\x88\x80\x80\x80", "\xf4\x90\x80\x80"}) {
        CAPTURE(std::string(bad));
        const auto one = tuning::parse_csv(header + kRow + "," + bad + "\n", "bad.csv");
        CHECK(one.rows.empty());
        CHECK(one.problems.size() == 1);
    }
    // A header that is not UTF-8 rejects the file.
    const auto bad_header = tuning::parse_csv("gfx\xff," + header.substr(4) + kRow + ",x\n", "header.csv");
    CHECK(bad_header.rows.empty());
    REQUIRE(bad_header.problems.size() == 1);
    CHECK(bad_header.problems[0].place == "header.csv:1");
}

TEST_CASE("tuning csv text: a UTF-8 byte-order mark is read past") {
    const std::string text = "\xef\xbb\xbf" + std::string(kCsvHeader) + kRow + "\n";
    const tuning::CsvRows parsed = tuning::parse_csv(text, "bom.csv");
    CHECK(parsed.problems.empty());
    REQUIRE(parsed.rows.size() == 1);
    CHECK(parsed.rows[0].key.arch == "gfx950");
    // Only at the start of the file: elsewhere it is a character in a field.
    const auto inside = tuning::parse_csv(std::string(kCsvHeader) + "\xef\xbb\xbf" + kRow + "\n", "inner.csv");
    CHECK(inside.rows.empty());
    CHECK(inside.problems.size() == 1);
}

TEST_CASE("tuning csv text: a column named twice rejects the file at line 1") {
    const std::string text = "gfx,cu_num,heads,head_dim,seq_len,seq_len_kv,backend,variant,us,variant\n" + kRow +
                             ",mfma32x32x64_bkv64_r2_w2_lds3\n";
    const tuning::CsvRows parsed = tuning::parse_csv(text, "twice.csv");
    CHECK(parsed.rows.empty());
    REQUIRE(parsed.problems.size() == 1);
    CHECK(parsed.problems[0].place == "twice.csv:1");
    CHECK(parsed.problems[0].message.find("variant") != std::string::npos);
    CHECK(parsed.problems[0].message.find("columns 8 and 10") != std::string::npos);
    // "arch" and "gfx" name the same column.
    const auto both = tuning::parse_csv("arch," + std::string(kCsvHeader) + "gfx950," + kRow + "\n", "both.csv");
    CHECK(both.rows.empty());
    CHECK(both.problems.size() == 1);
}

TEST_CASE("tuning db text: a row holding bytes that are not UTF-8 cannot break the readers") {
    TempDir dir("db-latin1");
    const std::filesystem::path user_db = dir.path() / "tuning.db";
    {
        TuningDb database(std::nullopt, user_db);
        database.insert(glm5_row(256, 4096, "mfma32x32x64_bkv64_r1_w2_lds2"));
    }
    {
        sqlite::Database database(user_db, sqlite::OpenMode::read_write);
        database.execute("UPDATE tuned_mqa_logits SET runner_up = CAST(X'636166E9' AS TEXT), date = X'FF'");
    }
    {
        TuningDb database(std::nullopt, user_db);
        for (const TunedRow& row : database.rows()) {
            CHECK(valid_utf8(row.runner_up));
            CHECK(valid_utf8(row.date));
        }
        const TunedRow* found = database.lookup(glm5_row(256, 4096, "x").key);
        REQUIRE(found != nullptr);
        CHECK(valid_utf8(found->runner_up));
    }
    // Each command runs in a subshell, so its stderr (the warnings) stays out of the JSON.
    const std::string cli = "(env -u MQAJIT_TUNING_DB -u MQAJIT_SYSTEM_DB " + quoted(cli_path()) + " db --db " +
                            quoted(user_db) + " --system-db " + quoted(dir.path() / "none.db") + " ";
    std::string output;
    CHECK(run_command(cli + "list --json 2>/dev/null)", &output) == 0);
    CHECK(nlohmann::json::accept(output));
    CHECK(run_command(cli + "lookup --arch gfx950 --cu-num 256 --heads 32 --head-dim 128 --seq-len 256 "
                            "--seq-len-kv 4096 --json 2>/dev/null)",
                      &output) == 0);
    CHECK(nlohmann::json::accept(output));
    // `db check` names the damaged row.
    CHECK(run_command(cli + "check)", &output) == 1);
    CHECK(output.find("not valid UTF-8") != std::string::npos);
}

TEST_CASE("tuning db text: `db import` of a Latin-1 file imports the good rows and exits 1 naming the line") {
    TempDir dir("import-latin1");
    const std::filesystem::path csv = dir.path() / "latin1.csv";
    write_text(csv, "gfx,cu_num,heads,head_dim,seq_len,seq_len_kv,backend,variant,us,runner_up\n" + kRow +
                        ",caf\xe9\n" + "gfx950,256,32,128,1024,4096,flydsl,mfma32x32x64_bkv64_r2_w2_lds3,20.0,ok\n");
    std::string output;
    CHECK(run_command("env -u MQAJIT_TUNING_DB " + quoted(cli_path()) + " db --db " + quoted(dir.path() / "t.db") +
                          " --system-db " + quoted(dir.path() / "none.db") + " import " + quoted(csv) + " 2>&1",
                      &output) == 1);
    CHECK(output.find(csv.string() + ":2: ") != std::string::npos);
    CHECK(output.find("imported 1 row(s)") != std::string::npos);
}
