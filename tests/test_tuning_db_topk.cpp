// The mqa_topk table: its key (arch, cu_num, heads, head_dim, k) plus seq_len_kv and seq_len by the
// floor rule, no mode column, its CSV layout and file names, its own SQLite table (schema version
// 5, migrated from 4), and which kernels its rows may name (a twgmma one or an mqa_logits one).

#include <doctest/doctest.h>

#include "mqajit/error.hpp"
#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tuning_db/check.hpp"
#include "tuning_db/config_files.hpp"
#include "tuning_db/csv.hpp"
#include "tuning_db/row_table.hpp"
#include "tuning_db/sqlite.hpp"
#include "tuning_db/system_db.hpp"
#include "tuning_db/tuning_db.hpp"

using namespace mqajit;
using namespace mqajit::testing;

namespace {

constexpr std::string_view kTopkHeader = "gfx,cu_num,heads,head_dim,k,seq_len,seq_len_kv,backend,variant,us\n";
constexpr std::string_view kFused = "twgmma64x128x32_bkv64_r4_w2_lds4";   // H=32
constexpr std::string_view kLogits = "wgmma64x128x32_bkv64_r4_w2_lds4";   // its twin

TopkShapeKey topk_key(int cu_num, int k, std::int64_t seq_len, std::int64_t seq_len_kv) {
    return {.arch = "sm_90a", .cu_num = cu_num, .heads = 32, .head_dim = 128, .k = k, .seq_len = seq_len,
            .seq_len_kv = seq_len_kv};
}

TopkTunedRow topk_row(int cu_num, int k, std::int64_t seq_len, std::int64_t seq_len_kv, std::string_view variant) {
    TopkTunedRow row;
    row.key = topk_key(cu_num, k, seq_len, seq_len_kv);
    row.backend = variant == "baseline" ? "baseline" : "jit";
    row.variant = std::string(variant);
    row.us = 100;
    return row;
}

std::string pick(const TuningDb& db, const TopkShapeKey& key) {
    const TopkTunedRow* row = db.lookup(key);
    return row ? row->variant : "none";
}

}  // namespace

TEST_CASE("topk db: a CSV's rows load with k as a key column, and a header without k says so") {
    const std::string text = std::string(kTopkHeader) + "sm90a,132,32,128,2048,1024,65536,jit," + std::string(kFused) +
                             ",812.5\n" + "sm_90a,132,32,128,2048,1024,8192,baseline,,90\n";
    const auto parsed = tuning::parse_csv<TopkShapeKey>(text, "t.csv");
    REQUIRE(parsed.problems.empty());
    REQUIRE(parsed.rows.size() == 2);
    CHECK(parsed.rows[0].key == topk_key(132, 2048, 1024, 65536));  // the arch in its canonical spelling
    CHECK(parsed.rows[0].variant == kFused);
    CHECK(parsed.rows[1].variant == "baseline");
    CHECK(tuning::csv_header<TopkShapeKey>().starts_with("gfx,cu_num,heads,head_dim,k,seq_len,seq_len_kv,backend"));

    const auto prefill = tuning::parse_csv<TopkShapeKey>(
        "gfx,cu_num,heads,head_dim,clean_logits,seq_len,seq_len_kv,backend,variant,us\n"
        "sm_90a,132,32,128,0,1024,8192,jit,wgmma64x128x32_bkv64_r4_w2_lds4,30\n", "p.csv");
    REQUIRE(prefill.problems.size() == 1);
    CHECK(prefill.problems[0].message.find("lacks column(s) k") != std::string::npos);
    CHECK(prefill.problems[0].message.find("those of a mqa_logits table") != std::string::npos);
}

TEST_CASE("topk db: files named mqa_topk_tuned[_<model>].csv are the mqa_topk table's") {
    CHECK(tuning::config_file_op("configs/mqa_topk_tuned.csv") == "mqa_topk");
    CHECK(tuning::config_file_op("configs/model_configs/mqa_topk_tuned_glm5.csv") == "mqa_topk");
    CHECK(tuning::config_file_op("configs/tuned_mqa_logits.csv") == "mqa_logits");
    CHECK(tuning::is_tuned_config_name<TopkShapeKey>("mqa_topk_tuned_glm5.csv"));
    CHECK_FALSE(tuning::is_tuned_config_name<TopkShapeKey>("mqa_topk_tunedglm5.csv"));
    CHECK_FALSE(tuning::is_tuned_config_name<ShapeKey>("mqa_topk_tuned.csv"));
}

TEST_CASE("topk db: lookups take the floor of seq_len_kv then seq_len, within the call's k and nearest SM count") {
    TempDir dir("topk-lookup");
    TuningDb db(std::nullopt, dir.path() / "tuning.db");
    CHECK(db.lookup(topk_key(132, 2048, 1024, 65536)) == nullptr);  // an empty table: no row
    const TopkLookupResult empty = db.explain(topk_key(132, 2048, 1024, 65536));
    CHECK_FALSE(empty.row);
    CHECK(std::ranges::any_of(empty.steps, [](const std::string& step) {
        return step.find("the mqa_topk table has no tuned rows at all") != std::string::npos &&
               step.find("mqajit tune --op mqa_topk") != std::string::npos;
    }));

    db.insert(std::vector<TopkTunedRow>{topk_row(132, 2048, 1024, 32768, kFused),
                                        topk_row(132, 2048, 4096, 32768, kLogits),
                                        topk_row(132, 2048, 1024, 8192, "baseline")});
    CHECK(pick(db, topk_key(132, 2048, 2000, 40000)) == kFused);
    CHECK(pick(db, topk_key(132, 2048, 8192, 1 << 20)) == kLogits);
    CHECK(pick(db, topk_key(132, 2048, 1024, 16384)) == "baseline");
    CHECK(pick(db, topk_key(132, 2048, 64, 1024)) == "baseline");  // below every length: the smallest
    CHECK(pick(db, topk_key(132, 1024, 2000, 40000)) == "none");   // k is an identity column
    const TopkLookupResult nearest = db.explain(topk_key(114, 2048, 2000, 40000));
    REQUIRE(nearest.row);
    CHECK(nearest.row->variant == kFused);
    REQUIRE(nearest.fallbacks.size() == 1);  // the SM count alone: the table has no mode to stand in
    CHECK(nearest.fallbacks[0].find("nearest tuned cu_num, 132") != std::string::npos);

    // The tables never see each other's rows.
    CHECK(db.lookup(ShapeKey{.arch = "sm_90a", .cu_num = 132, .heads = 32, .head_dim = 128, .clean_logits = 0,
                             .seq_len = 2000, .seq_len_kv = 40000}) == nullptr);
    CHECK(db.user_rows<TopkShapeKey>().size() == 3);
    CHECK(db.user_rows<ShapeKey>().empty());
}

TEST_CASE("topk db: a row names a twgmma or an mqa_logits kernel that runs at its key, nothing else") {
    CHECK_FALSE(tuning::unrunnable_problem(topk_row(132, 2048, 1024, 32768, kFused)));
    CHECK_FALSE(tuning::unrunnable_problem(topk_row(132, 2048, 1024, 32768, kLogits)));
    CHECK_FALSE(tuning::unrunnable_problem(topk_row(132, 2048, 1024, 32768, "baseline")));
    const auto paged = tuning::unrunnable_problem(topk_row(132, 2048, 1024, 32768, "pwgmma64x128x32_bkv64_r2_w2_lds4"));
    REQUIRE(paged);
    CHECK(paged->find("is not an mqa_topk kernel") != std::string::npos);
    const auto wrong_heads =
        tuning::unrunnable_problem(topk_row(132, 2048, 1024, 32768, "twgmma64x256x32_bkv64_r4_w2_lds4"));
    REQUIRE(wrong_heads);
    CHECK(wrong_heads->find("N=256 must equal r x heads") != std::string::npos);
    const auto amd = tuning::unrunnable_problem(topk_row(132, 2048, 1024, 32768, "mfma32x32x64_bkv128_r2_w4_lds3"));
    REQUIRE(amd);
    CHECK(amd->find("cannot run on sm_90a") != std::string::npos);

    TopkTunedRow unparsable = topk_row(132, 2048, 1024, 32768, "twgmma_nonsense");
    CHECK(row_problem(unparsable));
    TempDir dir("topk-insert");
    TuningDb db(std::nullopt, dir.path() / "tuning.db");
    CHECK_THROWS_WITH_AS(db.insert(unparsable), doctest::Contains("cannot store the tuned mqa_topk row"), Error);
}

TEST_CASE("topk db: the system database holds the mqa_topk CSVs' rows beside the other tables") {
    TempDir dir("topk-system");
    const auto topk_csv = dir.path() / "mqa_topk_tuned.csv";
    const auto prefill_csv = dir.path() / "tuned_mqa_logits.csv";
    write_text(topk_csv, std::string(kTopkHeader) + "sm_90a,132,32,128,2048,1024,32768,jit," + std::string(kFused) +
                             ",300\n");
    write_text(prefill_csv, std::string(kCsvHeader) + "sm_90a,132,32,128,1024,32768,jit," + std::string(kLogits) +
                                ",250\n");
    const auto built = tuning::build_system_db(dir.path() / "system.db", {topk_csv, prefill_csv});
    CHECK(built.mqa_topk.rows.size() == 1);
    CHECK(built.mqa_logits.rows.size() == 1);
    TuningDb db(dir.path() / "system.db", dir.path() / "user.db");
    const TopkTunedRow* row = db.lookup(topk_key(132, 2048, 4096, 65536));
    REQUIRE(row != nullptr);
    CHECK(row->variant == kFused);
    CHECK(row->origin == topk_csv.string() + ":2");
}

TEST_CASE("topk db: a version 4 user database gains the mqa_topk table, keeping its rows") {
    TempDir dir("topk-migrate");
    const auto file = dir.path() / "tuning.db";
    {
        TuningDb db(std::nullopt, file);
        TunedRow prefill = make_row("sm_90a", 132, 32, 128, 1024, 8192, std::string(kLogits), 9);
        prefill.key.clean_logits = 0;
        db.insert(prefill);
    }
    {
        sqlite::Database database(file, sqlite::OpenMode::read_write);
        database.execute("DROP TABLE tuned_mqa_topk");
        tuning::set_meta(database, "schema_version", "4");
    }
    {
        LogCapture capture;
        TuningDb db(std::nullopt, file);
        db.insert(topk_row(132, 2048, 1024, 32768, kFused));
        CHECK_FALSE(db.user_db_in_memory());
        CHECK(capture.count("from schema version 4 to 5 (which adds the mqa_topk table): its 1 prefill row(s) are "
                            "unchanged") == 1);
        CHECK(db.user_rows<ShapeKey>().size() == 1);
        CHECK(pick(db, topk_key(132, 2048, 1024, 32768)) == kFused);
    }
    sqlite::Database database(file, sqlite::OpenMode::read_only);
    CHECK(tuning::schema_version(database) == 5);
    CHECK(tuning::count_rows<TopkShapeKey>(database) == 1);
}

TEST_CASE("topk db: a table with another operator's key column is refused, not read without it") {
    const std::string topk = std::string(kTopkHeader) + "sm_90a,132,32,128,2048,1024,65536,jit," +
                             std::string(kLogits) + ",812.5\n";
    const auto as_prefill = tuning::parse_csv<ShapeKey>(topk, "t.csv");
    CHECK(as_prefill.rows.empty());
    REQUIRE(as_prefill.problems.size() == 1);
    CHECK(as_prefill.problems[0].message.find("the header names k, a key column of the mqa_topk table") !=
          std::string::npos);
    CHECK(as_prefill.problems[0].message.find("`--op mqa_topk`") != std::string::npos);
    const auto as_decode = tuning::parse_csv<PagedShapeKey>(topk, "t.csv");
    CHECK(as_decode.rows.empty());
    const auto decode_as_topk = tuning::parse_csv<TopkShapeKey>(
        "gfx,cu_num,next_n,heads,head_dim,block_kv,clean_logits,batch,k,seq_len,seq_len_kv,backend,variant,us\n"
        "sm_90a,132,1,32,128,64,0,1,2048,1,1,baseline,,5\n", "d.csv");
    CHECK(decode_as_topk.rows.empty());
    REQUIRE(decode_as_topk.problems.size() == 1);
    CHECK(decode_as_topk.problems[0].message.find("a key column of the mqa_logits table") != std::string::npos);
}
