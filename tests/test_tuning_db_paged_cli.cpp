// `mqajit db ... --op paged_mqa_logits` end to end: the built CLI on a system database holding a
// prefill and a decode table, as the build makes it; today's commands keep meaning the prefill table.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tuning_db/row_table.hpp"
#include "tuning_db/sqlite.hpp"

using namespace mqajit;
using namespace mqajit::testing;

namespace {

std::string quoted(const std::filesystem::path& path) { return "'" + path.string() + "'"; }
bool contains(const std::string& text, std::string_view needle) { return text.find(needle) != std::string::npos; }

constexpr std::string_view kDecodeCsv =
    "gfx,cu_num,next_n,heads,head_dim,block_kv,clean_logits,batch,backend,variant,us\n"
    "sm_90a,132,1,64,128,64,0,1,jit,pwgmma64x64x32_bkv64_r1_w1_lds2,5.5\n"
    "sm_90a,132,1,64,128,64,0,32,jit,pwgmma64x64x32_bkv64_r1_w2_lds4,12\n"
    "sm_90a,132,2,64,128,64,0,1,jit,pwgmma64x128x32_bkv64_r2_w2_lds4,6\n";
constexpr std::string_view kLookup = "lookup --op paged_mqa_logits --arch sm_90a --cu-num 132 --heads 64 --head-dim 128 "
                                     "--block-kv 64";

struct PagedCliFixture {
    TempDir dir{"paged-cli"};
    std::filesystem::path prefill = dir.path() / "configs" / "glm5_tuned_mqa_logits.csv";
    std::filesystem::path decode = dir.path() / "configs" / "paged_mqa_logits_tuned_deepseek_v32.csv";
    std::filesystem::path system_db = dir.path() / "share" / "system.db";
    std::filesystem::path user_db = dir.path() / "user" / "tuning.db";

    PagedCliFixture() {
        write_text(prefill, std::string(kCsvHeader) + "gfx950,256,32,128,256,4096,flydsl,mfma32x32x64_bkv64_r1_w2_lds2,18.4\n");
        write_text(decode, kDecodeCsv);
        std::string output;
        REQUIRE(run("db build-system --out " + quoted(system_db) + " " + quoted(prefill) + " " + quoted(decode),
                    &output) == 0);
        REQUIRE(contains(output, "wrote 4 row(s) from 2 file(s) to " + system_db.string() +
                                     " (mqa_logits 1, paged_mqa_logits 3, mqa_topk 0)"));
    }
    int db(const std::string& args, std::string* output) const {
        return run("db --db " + quoted(user_db) + " --system-db " + quoted(system_db) + " " + args, output);
    }
    static int run(const std::string& args, std::string* output) {
        return run_command("env -u MQAJIT_ARCH -u MQAJIT_TUNING_DB -u MQAJIT_SYSTEM_DB -u MQAJIT_NEAREST_CU_NUM " +
                               quoted(cli_path()) + " " + args,
                           output);
    }
};

}  // namespace

TEST_CASE("paged cli: lookup --op paged_mqa_logits takes next_n, block_kv and batch, and explains the floor rule") {
    PagedCliFixture fixture;
    std::string output;
    CHECK(fixture.db(std::string(kLookup) + " --next-n 1 --batch 100", &output) == 0);
    CHECK(contains(output, "paged_mqa_logits: arch=sm_90a cu_num=132 next_n=1 heads=64 head_dim=128 block_kv=64 "
                           "clean_logits=0 batch=100"));
    CHECK(contains(output, "batch 100: the largest tuned batch not above it is 32 (tuned: 1, 32)"));
    CHECK(contains(output, "paged_mqa_logits_tuned_deepseek_v32.csv:3"));
    CHECK(output.ends_with("pwgmma64x64x32_bkv64_r1_w2_lds4\n"));

    REQUIRE(fixture.db(std::string(kLookup) + " --next-n 2 --batch 7 --clean-logits 1 --json", &output) == 0);
    const auto json = nlohmann::json::parse(output);
    CHECK(json["op"] == "paged_mqa_logits");
    CHECK(json["kernel"] == "pwgmma64x128x32_bkv64_r2_w2_lds4");
    CHECK(json["shape"]["next_n"] == 2);
    CHECK(json["shape"]["batch"] == 7);
    CHECK(json["row"]["batch"] == 1);
    CHECK(json["fallbacks"].size() == 1);  // no clean_logits=1 rows: the other mode's serve

    // The nearest SM count, and MQAJIT_NEAREST_CU_NUM=0 turning it off, as for the prefill table.
    const std::string at_114 = "lookup --op paged_mqa_logits --arch sm_90a --cu-num 114 --heads 64 --head-dim 128 "
                               "--block-kv 64 --next-n 1 --batch 1";
    CHECK(fixture.db(at_114, &output) == 0);
    CHECK(contains(output, "the nearest tuned cu_num, 132, serves"));
    CHECK(output.ends_with("pwgmma64x64x32_bkv64_r1_w1_lds2\n"));
    CHECK(run_command("env MQAJIT_NEAREST_CU_NUM=0 " + quoted(cli_path()) + " db --db " + quoted(fixture.user_db) +
                          " --system-db " + quoted(fixture.system_db) + " " + at_114,
                      &output) == 0);
    CHECK(contains(output, "MQAJIT_NEAREST_CU_NUM is off"));
    CHECK(output.ends_with("baseline\n"));

    // An untuned decode shape: the baseline, with its reason.
    CHECK(fixture.db(std::string(kLookup) + " --next-n 4 --batch 8", &output) == 0);
    CHECK(contains(output, "no tuned rows for group arch=sm_90a cu_num=132 next_n=4"));
    CHECK(output.ends_with("baseline\n"));
    // Today's command is unchanged: the prefill table.
    CHECK(fixture.db("lookup --arch gfx950 --cu-num 256 --heads 32 --head-dim 128 --seq-len 300 --seq-len-kv 5000",
                     &output) == 0);
    CHECK(contains(output, "mqa_logits: arch=gfx950"));
    CHECK(output.ends_with("mfma32x32x64_bkv64_r1_w2_lds2\n"));
}

TEST_CASE("paged cli: a lookup with the other operator's keys, or without its own, is bad usage") {
    PagedCliFixture fixture;
    std::string output;
    CHECK(fixture.db(std::string(kLookup) + " --next-n 1", &output) == 2);
    CHECK(contains(output, "a paged_mqa_logits lookup needs --batch"));
    CHECK(fixture.db(std::string(kLookup) + " --next-n 1 --batch 4 --seq-len 4", &output) == 2);
    CHECK(contains(output, "--seq-len is not a key of the paged_mqa_logits table"));
    CHECK(fixture.db("lookup --arch sm_90a --cu-num 132 --heads 64 --head-dim 128 --seq-len 1 --seq-len-kv 1 --batch 4",
                     &output) == 2);
    CHECK(contains(output, "--batch is not a key of the mqa_logits table"));
    CHECK(fixture.db("lookup --arch sm_90a --cu-num 132 --heads 64 --head-dim 128 --seq-len 1", &output) == 2);
    CHECK(contains(output, "needs --seq-len-kv"));
    CHECK(fixture.db(std::string(kLookup) + " --next-n 0 --batch 4", &output) == 2);
    CHECK(contains(output, "next_n is 0"));
    CHECK(fixture.db("lookup --op decode --arch sm_90a --cu-num 132 --heads 64 --head-dim 128", &output) == 2);
    CHECK(contains(output, "--op"));
}

TEST_CASE("paged cli: list, export and import work on the decode table, import refuses what cannot run") {
    PagedCliFixture fixture;
    std::string output;
    CHECK(fixture.db("list --op paged_mqa_logits", &output) == 0);
    CHECK(contains(output, "gfx     cu_num  next_n  heads  head_dim  block_kv  clean_logits  batch"));
    CHECK(output.ends_with("\n3 row(s)\n"));
    CHECK(fixture.db("list", &output) == 0);
    CHECK(contains(output, "seq_len_kv"));
    CHECK(output.ends_with("\n1 row(s)\n"));
    REQUIRE(fixture.db("list --op paged_mqa_logits --json", &output) == 0);
    CHECK(nlohmann::json::parse(output).size() == 3);

    // Export, then import under a name that says nothing: --op says which table.
    const auto exported = fixture.dir.path() / "out.csv";
    CHECK(fixture.db("export --op paged_mqa_logits " + quoted(exported), &output) == 0);
    CHECK(read_text(exported).starts_with("gfx,cu_num,next_n,heads,head_dim,block_kv,clean_logits,batch,backend,"));
    CHECK(fixture.db("import " + quoted(exported), &output) == 1);  // read as a prefill table: the header says
    CHECK(contains(output, "`--op paged_mqa_logits`"));
    CHECK(fixture.db("import --op paged_mqa_logits " + quoted(exported), &output) == 0);
    CHECK(contains(output, "imported 3 row(s) from " + exported.string()));
    CHECK(fixture.db("list --op paged_mqa_logits --user-only", &output) == 0);
    CHECK(contains(output, "user:" + fixture.user_db.string()));
    CHECK(output.ends_with("\n3 row(s)\n"));
    CHECK(fixture.db("list --user-only", &output) == 0);
    CHECK(output.ends_with("\n0 row(s)\n"));

    // A file named like a decode table is imported as one; a row whose variant cannot run is skipped.
    const auto named = fixture.dir.path() / "paged_mqa_logits_tuned_mine.csv";
    write_text(named, "gfx,cu_num,next_n,heads,head_dim,block_kv,clean_logits,batch,backend,variant,us\n"
                      "sm_90a,132,3,64,128,64,0,1,jit,pwgmma64x192x32_bkv64_r3_w2_lds4,7\n"
                      "sm_90a,132,3,64,128,64,0,8,jit,pwgmma64x192x32_bkv64_r3_w3_lds6,7\n");
    CHECK(fixture.db("import " + quoted(named), &output) == 1);
    CHECK(contains(output, named.string() + ":3: variant pwgmma64x192x32_bkv64_r3_w3_lds6 cannot run on sm_90a at "
                                            "next_n=3 heads=64 head_dim=128 block_kv=64"));
    CHECK(contains(output, "imported 1 row(s) from " + named.string()));
    sqlite::Database database(fixture.user_db, sqlite::OpenMode::read_only);
    CHECK(tuning::count_rows<PagedShapeKey>(database) == 4);
    CHECK(tuning::count_rows<ShapeKey>(database) == 0);
}

TEST_CASE("paged cli: check covers both tables' files and user rows, or the one --op names") {
    PagedCliFixture fixture;
    std::string output;
    CHECK(fixture.db("check", &output) == 0);
    CHECK(contains(output, "glm5_tuned_mqa_logits.csv"));
    CHECK(contains(output, "paged_mqa_logits_tuned.csv"));
    CHECK_FALSE(contains(output, "untuned"));
    CHECK(fixture.db("check " + quoted(fixture.prefill) + " " + quoted(fixture.decode), &output) == 0);
    CHECK(contains(output, "ok: 4 row(s)"));

    // A decode row that cannot run fails the check, in its file and in the user database.
    const auto bad = fixture.dir.path() / "paged_mqa_logits_tuned_bad.csv";
    write_text(bad, "gfx,cu_num,next_n,heads,head_dim,block_kv,clean_logits,batch,backend,variant,us\n"
                    "sm_90a,132,2,64,128,64,0,1,jit,pwgmma64x64x32_bkv64_r1_w2_lds4,6\n");
    CHECK(fixture.db("check " + quoted(bad), &output) == 1);
    CHECK(contains(output, "r=1 must equal the call's next_n, 2"));
    CHECK(fixture.db("check --op mqa_logits " + quoted(fixture.prefill), &output) == 0);
    REQUIRE(fixture.db("import --op paged_mqa_logits " + quoted(fixture.decode), &output) == 0);
    {
        sqlite::Database database(fixture.user_db, sqlite::OpenMode::read_write);
        database.execute("UPDATE tuned_paged_mqa_logits SET variant = 'pwgmma64x64x32_bkv64_r1_w5_lds5' WHERE batch = 32");
    }
    CHECK(fixture.db("check", &output) == 1);
    CHECK(contains(output, "w (math warpgroups) must be 1 to 4"));
    CHECK(fixture.db("check --op mqa_logits", &output) == 0);
    CHECK(fixture.db("check --op paged_mqa_logits --json", &output) == 1);
    const auto json = nlohmann::json::parse(output);
    CHECK(json["ok"] == false);
    CHECK(json["problems"].size() == 1);
}
