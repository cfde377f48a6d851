// The logits dtype in the prefill tuning key: bfloat16 rows serve bfloat16 calls, float32 rows
// stand in where a dtype has none (after the call's own dtype in the other clean_logits mode),
// explain says so; tables and databases without the column hold float32 rows (a version 3 user
// database is migrated); the tuner's output CSV gains the column when a bfloat16 row is written.

#include <doctest/doctest.h>

#include "tests/error_kind.hpp"
#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tools/common/tune_output_csv.hpp"
#include "tuning_db/csv.hpp"
#include "tuning_db/group_choice.hpp"
#include "tuning_db/row_table.hpp"
#include "tuning_db/sqlite.hpp"
#include "tuning_db/tuning_db.hpp"

using namespace mqajit;
using namespace mqajit::testing;

namespace {

ShapeKey group(int clean_logits, std::string_view dtype, int cu_num = 132) {
    return {.arch = "sm_90a", .cu_num = cu_num, .heads = 32, .head_dim = 128, .clean_logits = clean_logits,
            .logits_dtype = std::string(dtype)};
}

ShapeKey key(int clean_logits, std::string_view dtype, std::int64_t seq_len, std::int64_t seq_len_kv) {
    ShapeKey k = group(clean_logits, dtype);
    k.seq_len = seq_len;
    k.seq_len_kv = seq_len_kv;
    return k;
}

bool mentions(const std::vector<std::string>& lines, std::string_view needle) {
    return std::ranges::any_of(lines, [&](const std::string& line) { return line.find(needle) != std::string::npos; });
}

// float32 rows in both modes, bfloat16 rows in mode 0 only; every variant a different one, so a
// wrong group shows.
constexpr std::string_view kDtypesCsv =
    "gfx,cu_num,heads,head_dim,clean_logits,seq_len,seq_len_kv,backend,variant,us,logits_dtype\n"
    "sm_90a,132,32,128,0,1024,8192,jit,wgmma64x128x32_bkv128_r4_w2_lds4,10,float32\n"
    "sm_90a,132,32,128,1,1024,8192,jit,wgmma64x128x32_bkv64_r4_w2_lds4,11,\n"
    "sm_90a,132,32,128,0,1024,8192,jit,wgmma64x128x32_bkv64_r4_w3_lds6,12,bfloat16\n";

std::string pick(const TuningDb& db, const ShapeKey& k) {
    const TunedRow* row = db.lookup(k);
    return row ? row->variant : "baseline";
}

}  // namespace

TEST_CASE("group choice: a bfloat16 call takes bfloat16 rows, then float32 ones, each mode before the other") {
    const std::vector<ShapeKey> tuned = {group(0, "float32"), group(1, "float32"), group(0, "bfloat16")};
    auto choice = tuning::choose_group(group(0, "bfloat16"), tuned, true);
    CHECK(choice.group == group(0, "bfloat16"));
    CHECK(choice.fallbacks.empty());
    // The call's own dtype in the other mode comes before the other dtype in the call's mode.
    choice = tuning::choose_group(group(1, "bfloat16"), tuned, true);
    CHECK(choice.group == group(0, "bfloat16"));
    REQUIRE(choice.fallbacks.size() == 1);
    CHECK(choice.fallbacks[0].find("no rows tuned with clean_logits=1") != std::string::npos);
    // Without bfloat16 rows the float32 ones serve, and the fallback names the dtype and the tuning command.
    const std::vector<ShapeKey> float32_only = {group(0, "float32"), group(1, "float32")};
    choice = tuning::choose_group(group(1, "bfloat16"), float32_only, true);
    CHECK(choice.group == group(1, "float32"));
    REQUIRE(choice.fallbacks.size() == 1);
    CHECK(choice.fallbacks[0].find("no rows tuned with logits_dtype=bfloat16: the logits_dtype=float32 rows serve") !=
          std::string::npos);
    CHECK(choice.fallbacks[0].find("mqajit tune --logits-dtype bfloat16") != std::string::npos);
    // A float32 call never takes bfloat16 rows while float32 ones exist, even in the other mode.
    CHECK(tuning::choose_group(group(1, "float32"), tuned, true).group == group(1, "float32"));
    // Only bfloat16 rows, at another SM count: they serve a float32 call there, with both fallbacks said.
    choice = tuning::choose_group(group(0, "float32", 114), {group(0, "bfloat16")}, true);
    CHECK(choice.group == group(0, "bfloat16"));
    CHECK(choice.fallbacks.size() == 2);
}

TEST_CASE("tuning lookup: bfloat16 calls find their rows, float32 calls keep theirs, explain says which") {
    SystemDbFixture fixture("dtypes", kDtypesCsv, 3);
    TuningDb db(fixture.system_db, fixture.user_db);
    CHECK(pick(db, key(0, "float32", 2048, 9000)) == "wgmma64x128x32_bkv128_r4_w2_lds4");
    CHECK(pick(db, key(1, "float32", 2048, 9000)) == "wgmma64x128x32_bkv64_r4_w2_lds4");
    CHECK(pick(db, key(0, "bfloat16", 2048, 9000)) == "wgmma64x128x32_bkv64_r4_w3_lds6");
    CHECK(pick(db, key(1, "bfloat16", 2048, 9000)) == "wgmma64x128x32_bkv64_r4_w3_lds6");
    const LookupResult own = db.explain(key(0, "bfloat16", 2048, 9000));
    CHECK(own.fallbacks.empty());
    CHECK(mentions(own.steps, "clean_logits=0 logits_dtype=bfloat16: 1 tuned row(s)"));

    // A user row tuned with bfloat16 in mode 1 takes over those calls.
    TunedRow user = make_row("sm_90a", 132, 32, 128, 1024, 8192, "wgmma64x256x32_bkv64_r8_w2_lds4", 9);
    user.key.clean_logits = 1;
    user.key.logits_dtype = "bfloat16";
    db.insert(user);
    CHECK(pick(db, key(1, "bfloat16", 2048, 9000)) == "wgmma64x256x32_bkv64_r8_w2_lds4");
    CHECK(pick(db, key(0, "bfloat16", 2048, 9000)) == "wgmma64x128x32_bkv64_r4_w3_lds6");
    CHECK(pick(db, key(1, "float32", 2048, 9000)) == "wgmma64x128x32_bkv64_r4_w2_lds4");
}

TEST_CASE("tuning csv: logits_dtype is read and written, a table without it holds float32 rows, others are refused") {
    const auto table = tuning::parse_csv(kDtypesCsv, "dtypes.csv");
    CHECK(table.problems.empty());
    REQUIRE(table.rows.size() == 3);
    CHECK(table.rows[0].key.logits_dtype == "float32");
    CHECK(table.rows[1].key.logits_dtype == "float32");  // an empty field: float32
    CHECK(table.rows[2].key.logits_dtype == "bfloat16");
    CHECK(tuning::csv_line(table.rows[2]).find(",0,bfloat16,1024,8192,") != std::string::npos);
    const auto old = tuning::parse_csv("gfx,cu_num,heads,head_dim,seq_len,seq_len_kv,backend,variant,us\n"
                                       "sm_90a,132,32,128,1024,8192,jit,wgmma64x128x32_bkv64_r4_w2_lds4,11\n",
                                       "old.csv");
    REQUIRE(old.rows.size() == 1);
    CHECK(old.rows[0].key.logits_dtype == "float32");
    const auto bad = tuning::parse_csv("gfx,cu_num,heads,head_dim,seq_len,seq_len_kv,backend,variant,us,logits_dtype\n"
                                       "sm_90a,132,32,128,1024,8192,jit,wgmma64x128x32_bkv64_r4_w2_lds4,11,float16\n",
                                       "bad.csv");
    CHECK(bad.rows.empty());
    REQUIRE(bad.problems.size() == 1);
    CHECK(bad.problems[0].message.find("logits_dtype is 'float16'; it must be float32 or bfloat16") !=
          std::string::npos);
}

TEST_CASE("tuning user db: a version 3 database is migrated in place, its rows becoming float32 rows") {
    TempDir dir("migrate-dtype");
    const auto file = dir.path() / "tuning.db";
    make_version_2_or_3_db(file, 3, "sm_90a", 132, "wgmma64x128x32_bkv64_r4_w2_lds4");
    {
        LogCapture capture;
        TuningDb db(std::nullopt, file);
        CHECK_FALSE(db.user_db_in_memory());
        CHECK(capture.count("from schema version 3 to 5 (which adds the logits_dtype key and the mqa_topk table): its "
                            "1 prefill row(s) are float32 rows") == 1);
        const auto rows = db.user_rows();
        REQUIRE(rows.size() == 1);
        CHECK(rows[0].key == key(0, "float32", 1024, 4096));
        CHECK(rows[0].us == 9);
        // A bfloat16 call is served by it, as by any float32 row, and says so.
        const LookupResult result = db.explain(key(0, "bfloat16", 2000, 5000));
        REQUIRE(result.row);
        CHECK(result.row->variant == "wgmma64x128x32_bkv64_r4_w2_lds4");
        CHECK(mentions(result.fallbacks, "no rows tuned with logits_dtype=bfloat16"));
        TunedRow bf16 = make_row("sm_90a", 132, 32, 128, 1024, 4096, "wgmma64x128x32_bkv64_r4_w3_lds6", 8);
        bf16.key.clean_logits = 0;
        bf16.key.logits_dtype = "bfloat16";
        db.insert(bf16);
    }
    sqlite::Database database(file, sqlite::OpenMode::read_only);
    CHECK(tuning::schema_version(database) == tuning::kSchemaVersion);
    CHECK(tuning::count_rows(database) == 2);
}

TEST_CASE("tune output csv: a table without logits_dtype gains the column when a bfloat16 row is written") {
    const std::string header = "gfx,cu_num,heads,head_dim,clean_logits,seq_len,seq_len_kv,backend,variant,us";
    const std::string old_row = "sm_90a,132,32,128,0,256,4096,jit,wgmma64x128x32_bkv64_r4_w2_lds4,21.5";
    tools::TuneOutputCsv table = tools::TuneOutputCsv::parse(header + "\n" + old_row + "\n", "old.csv");
    TunedRow float32_row = make_row("sm_90a", 132, 32, 128, 1024, 4096, "wgmma64x128x32_bkv64_r4_w2_lds4", 30);
    float32_row.key.clean_logits = 0;
    table.upsert(float32_row);  // float32 needs no column: the layout stays
    CHECK(table.text().starts_with(header + "\n"));
    TunedRow bf16_row = float32_row;
    bf16_row.key.logits_dtype = "bfloat16";
    bf16_row.us = 25;
    table.upsert(bf16_row);  // a new key beside the float32 row of the same shape
    CHECK(table.text().starts_with(header + ",logits_dtype\n" + old_row + ",float32\n"));
    const tools::TuneOutputCsv back = tools::TuneOutputCsv::parse(table.text(), "old.csv");
    CHECK(back.problems().empty());
    REQUIRE(back.rows().size() == 3);
    CHECK(back.rows()[0].key.logits_dtype == "float32");
    CHECK(back.rows()[1].key == float32_row.key);
    CHECK(back.rows()[2].key == bf16_row.key);
    CHECK(back.rows()[2].us == 25);
}
