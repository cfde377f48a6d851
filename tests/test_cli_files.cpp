// The CLI's files as a user meets them: outputs that cannot be written, an output named like its
// input, an empty table, another program's SQLite file, a later unrunnable row of the same key.
// The built CLI runs as a user would, on files in a temp folder.

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tuning_db/sqlite.hpp"

using namespace mqajit;
using namespace mqajit::testing;

namespace {

std::string quoted(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

// `mqajit db` on this folder's user database and no system database (none.db does not exist).
std::string db_command(const TempDir& dir) {
    return "env -u MQAJIT_TUNING_DB -u MQAJIT_SYSTEM_DB " + quoted(cli_path()) + " db --db " +
           quoted(dir.path() / "user.db") + " --system-db " + quoted(dir.path() / "none.db") + " ";
}

bool contains(const std::string& text, std::string_view needle) { return text.find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("cli files: output that cannot be written fails the command") {
    TempDir dir("cli-full");
    std::string output;
    if (!std::filesystem::exists("/dev/full")) return;  // no such device here: nothing to write into
    CHECK(run_command(db_command(dir) + "export - > /dev/full 2>&1", &output) == 1);
    CHECK(run_command("(" + db_command(dir) + "list --json > /dev/full) 2>&1", &output) == 1);
    CHECK(contains(output, "cannot write the output"));
    CHECK(run_command(db_command(dir) + "list --json > /dev/null", &output) == 0);
}

TEST_CASE("cli files: an output that is the input is refused, and the input kept") {
    TempDir dir("cli-same");
    const auto csv = dir.path() / "glm5_tuned_mqa_logits.csv";
    const std::string table =
        std::string(kCsvHeader) + "gfx950,256,32,128,256,4096,flydsl,mfma32x32x64_bkv64_r1_w2_lds2,18.4\n";
    write_text(csv, table);
    std::string output;
    CHECK(run_command(quoted(cli_path()) + " db build-system --out " + quoted(csv) + " " + quoted(csv) + " 2>&1",
                      &output) == 2);
    CHECK(contains(output, "is the input"));
    CHECK(run_command(quoted(cli_path()) + " report --tuned " + quoted(csv) + " -o " + quoted(csv) + " 2>&1",
                      &output) == 2);
    CHECK(contains(output, "is the input"));
    CHECK(run_command("cat " + quoted(csv), &output) == 0);
    CHECK(output == table);
}

TEST_CASE("cli files: an empty table is a problem, not an empty success") {
    TempDir dir("cli-empty");
    const auto csv = dir.path() / "empty.csv";
    write_text(csv, "\n\n");
    std::string output;
    CHECK(run_command(db_command(dir) + "check " + quoted(csv) + " 2>&1", &output) == 1);
    CHECK(contains(output, "has no header line"));
    CHECK(run_command(db_command(dir) + "import " + quoted(csv) + " 2>&1", &output) == 1);
    CHECK(contains(output, "has no header line"));
}

TEST_CASE("cli files: another program's SQLite file is refused and left as it was") {
    TempDir dir("cli-foreign");
    const auto file = dir.path() / "user.db";
    {
        sqlite::Database database(file, sqlite::OpenMode::read_write_create);
        database.execute("CREATE TABLE people (name TEXT)");
    }
    std::string output;
    CHECK(run_command(db_command(dir) + "list 2>&1", &output) == 1);
    CHECK(contains(output, "holds tables mqajit does not know (people)"));
    sqlite::Database database(file, sqlite::OpenMode::read_only);
    auto tables = database.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'");
    REQUIRE(tables->step());
    CHECK(tables->column_int64(0) == 1);
    auto mode = database.prepare("PRAGMA journal_mode");
    REQUIRE(mode->step());
    CHECK(mode->column_text(0) == "delete");  // not switched to WAL
}

TEST_CASE("cli files: import keeps a runnable row that a later unrunnable row of the same key would hide") {
    TempDir dir("cli-unrunnable");
    const auto csv = dir.path() / "mine.csv";
    write_text(csv, "gfx,cu_num,heads,head_dim,clean_logits,seq_len,seq_len_kv,backend,variant,us\n"
                    "sm_90a,132,64,128,1,256,4096,jit,wgmma64x256x32_bkv64_r4_w2_lds4,22.3\n"
                    "sm_90a,132,64,128,1,256,4096,jit,wgmma64x128x32_bkv64_r4_w2_lds4,20\n");
    std::string output;
    CHECK(run_command(db_command(dir) + "import " + quoted(csv) + " 2>&1", &output) == 1);  // the skipped row
    CHECK(contains(output, "imported 1 row(s)"));
    CHECK(contains(output, "mine.csv:3"));
    CHECK(run_command(db_command(dir) + "lookup --arch sm_90a --cu-num 132 --heads 64 --head-dim 128 --clean-logits 1 "
                                        "--seq-len 256 --seq-len-kv 4096 2>/dev/null",
                      &output) == 0);
    CHECK(contains(output, "wgmma64x256x32_bkv64_r4_w2_lds4"));
}
