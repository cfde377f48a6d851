// The paged_mqa_logits (decode) table: its key (arch, cu_num, next_n, heads, head_dim, block_kv,
// clean_logits) plus the batch by the floor rule, its CSV layout, its own SQLite table beside the
// prefill one, the stand-ins shared with the prefill table (the other mode, the nearest SM count),
// an empty table answering the baseline, and the two tables never seeing each other's rows.

#include <doctest/doctest.h>

#include <sstream>

#include "mqajit/error.hpp"

#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tuning_db/check.hpp"
#include "tuning_db/csv.hpp"
#include "tuning_db/row_table.hpp"
#include "tuning_db/sqlite.hpp"
#include "tuning_db/system_db.hpp"
#include "tuning_db/tuning_db.hpp"

using namespace mqajit;
using namespace mqajit::testing;

namespace {

constexpr std::string_view kPagedHeader = "gfx,cu_num,next_n,heads,head_dim,block_kv,clean_logits,batch,backend,variant,us\n";

PagedShapeKey decode_key(int cu_num, int clean_logits, std::int64_t batch, int next_n = 2, int heads = 64) {
    return {.arch = "sm_90a", .cu_num = cu_num, .next_n = next_n, .heads = heads, .head_dim = 128, .block_kv = 64,
            .clean_logits = clean_logits, .batch = batch};
}

PagedTunedRow decode_row(int cu_num, int clean_logits, std::int64_t batch, std::string variant, int next_n = 2) {
    PagedTunedRow row;
    row.key = decode_key(cu_num, clean_logits, batch, next_n);
    row.backend = variant == "baseline" ? "baseline" : "jit";
    row.variant = std::move(variant);
    row.us = 10;
    return row;
}

std::string pick(const TuningDb& db, const PagedShapeKey& key) {
    const PagedTunedRow* row = db.lookup(key);
    return row ? row->variant : "baseline";
}

bool mentions(const std::vector<std::string>& lines, std::string_view needle) {
    return std::ranges::any_of(lines, [&](const std::string& line) { return line.find(needle) != std::string::npos; });
}

// DeepSeek-V3.2 (H=64) decode at next_n=2: mode 0 at batch 1, 8 and 64 (132 SMs), mode 1 at batch 1
// only; 114 SMs in mode 1 only; next_n=1 in mode 0 only. Each variant can run where it stands.
constexpr std::string_view kW2 = "pwgmma64x128x32_bkv64_r2_w2_lds4";
constexpr std::string_view kW1 = "pwgmma64x128x32_bkv64_r2_w1_lds4";
constexpr std::string_view kLds8 = "pwgmma64x128x32_bkv64_r2_w2_lds8";
constexpr std::string_view kNext1 = "pwgmma64x64x32_bkv64_r1_w2_lds4";

std::string decode_csv() {
    return std::string(kPagedHeader) + "sm_90a,132,2,64,128,64,0,1,jit," + std::string(kW1) + ",5\n" +
           "sm_90a,132,2,64,128,64,0,8,jit," + std::string(kW2) + ",6\n" + "sm_90a,132,2,64,128,64,0,64,baseline,,9\n" +
           "sm_90a,132,2,64,128,64,1,1,jit," + std::string(kLds8) + ",7\n" + "sm_90a,114,2,64,128,64,1,1,jit," +
           std::string(kW2) + ",8\n" + "sm_90a,132,1,64,128,64,0,1,jit," + std::string(kNext1) + ",4\n";
}

// A system database built from one prefill and one decode table, as the build does.
struct BothTablesFixture {
    TempDir dir{"paged"};
    std::filesystem::path prefill = dir.path() / "model_configs" / "glm5_tuned_mqa_logits.csv";
    std::filesystem::path decode = dir.path() / "model_configs" / "paged_mqa_logits_tuned_deepseek_v32.csv";
    std::filesystem::path system_db = dir.path() / "system.db";
    std::filesystem::path user_db = dir.path() / "user" / "tuning.db";
    BothTablesFixture() {
        write_text(prefill, std::string(kCsvHeader) + "gfx950,256,32,128,1024,4096,jit,mfma32x32x64_bkv64_r2_w2_lds3,9\n");
        write_text(decode, decode_csv());
        const auto built = tuning::build_system_db(system_db, {decode, prefill});
        REQUIRE(built.mqa_logits.problems.empty());
        REQUIRE(built.paged_mqa_logits.problems.empty());
        REQUIRE(built.mqa_logits.rows.size() == 1);
        REQUIRE(built.paged_mqa_logits.rows.size() == 6);
    }
};

}  // namespace

TEST_CASE("paged table: its columns, CSV header and SQL table come from its one column list") {
    CHECK(tuning::csv_header<PagedShapeKey>() ==
          "gfx,cu_num,next_n,heads,head_dim,block_kv,clean_logits,batch,backend,variant,us,baseline_us,runner_up,"
          "tuner_version,compiler_version,driver_version,date");
    const std::string& ddl = tuning::table_ddl<PagedShapeKey>();
    CHECK(ddl.starts_with("CREATE TABLE IF NOT EXISTS tuned_paged_mqa_logits ("));
    CHECK(ddl.find("PRIMARY KEY (arch, cu_num, next_n, heads, head_dim, block_kv, clean_logits, batch)") !=
          std::string::npos);
    CHECK(to_string(decode_key(132, 0, 32)) ==
          "arch=sm_90a cu_num=132 next_n=2 heads=64 head_dim=128 block_kv=64 clean_logits=0 batch=32");
    CHECK(group_string(decode_key(132, 0, 32)) ==
          "arch=sm_90a cu_num=132 next_n=2 heads=64 head_dim=128 block_kv=64 clean_logits=0");
    CHECK(num_lengths<PagedShapeKey>() == 1);
    CHECK(length_names<ShapeKey>() == std::array<std::string_view, 2>{"seq_len_kv", "seq_len"});
    CHECK(key_problem(decode_key(132, 2, 1)).value_or("") == "clean_logits is 2; it must be 0 or 1");
    CHECK(key_problem(decode_key(132, 0, 0)).value_or("") == "batch is 0; sizes must be positive");
}

TEST_CASE("paged csv: rows parse and print back, the mode column is required, another op's table says so") {
    const auto parsed = tuning::parse_csv<PagedShapeKey>(decode_csv(), "d.csv");
    REQUIRE(parsed.problems.empty());
    REQUIRE(parsed.rows.size() == 6);
    CHECK(parsed.rows[0].key == decode_key(132, 0, 1));
    CHECK(parsed.rows[0].origin == "d.csv:2");
    CHECK(parsed.rows[2].variant == "baseline");  // an empty variant of a baseline row
    CHECK(tuning::csv_line(parsed.rows[1]).starts_with("sm_90a,132,2,64,128,64,0,8,jit,pwgmma64x128x32_bkv64_r2_w2_lds4,6,"));
    std::ostringstream out;
    tuning::write_csv(out, parsed.rows);
    const auto again = tuning::parse_csv<PagedShapeKey>(out.str(), "again.csv");
    REQUIRE(again.rows.size() == parsed.rows.size());
    for (std::size_t i = 0; i < again.rows.size(); ++i) CHECK(tuning::csv_line(again.rows[i]) == tuning::csv_line(parsed.rows[i]));

    // No clean_logits column: refused (no decode table predates the column).
    const auto no_mode = tuning::parse_csv<PagedShapeKey>(
        "gfx,cu_num,next_n,heads,head_dim,block_kv,batch,backend,variant,us\nsm_90a,132,1,64,128,64,1,baseline,,1\n",
        "m.csv");
    CHECK(no_mode.rows.empty());
    REQUIRE(no_mode.problems.size() == 1);
    CHECK(no_mode.problems[0].message.find("lacks column(s) clean_logits") != std::string::npos);
    // A prefill table read as a decode one, and the other way round: the header says whose it is.
    const auto prefill_as_decode = tuning::parse_csv<PagedShapeKey>(
        std::string(kCsvHeader) + "gfx950,256,32,128,1024,4096,jit,mfma32x32x64_bkv64_r2_w2_lds3,9\n", "p.csv");
    CHECK(prefill_as_decode.rows.empty());
    REQUIRE(prefill_as_decode.problems.size() == 1);
    CHECK(prefill_as_decode.problems[0].message.find("those of a mqa_logits table") != std::string::npos);
    const auto decode_as_prefill = tuning::parse_csv<ShapeKey>(decode_csv(), "d.csv");
    CHECK(decode_as_prefill.rows.empty());
    REQUIRE(decode_as_prefill.problems.size() == 1);
    CHECK(decode_as_prefill.problems[0].message.find("lacks column(s) seq_len, seq_len_kv") != std::string::npos);
    CHECK(decode_as_prefill.problems[0].message.find("`--op paged_mqa_logits`") != std::string::npos);
}

TEST_CASE("paged lookup: the largest tuned batch not above the call's, below all the smallest") {
    BothTablesFixture fixture;
    TuningDb db(fixture.system_db, fixture.user_db);
    CHECK(pick(db, decode_key(132, 0, 1)) == kW1);
    CHECK(pick(db, decode_key(132, 0, 7)) == kW1);
    CHECK(pick(db, decode_key(132, 0, 8)) == kW2);
    CHECK(pick(db, decode_key(132, 0, 63)) == kW2);
    CHECK(db.lookup(decode_key(132, 0, 2048))->backend == "baseline");
    const PagedLookupResult explained = db.explain(decode_key(132, 0, 20));
    REQUIRE(explained.row);
    CHECK(explained.row->variant == kW2);
    CHECK(explained.fallbacks.empty());
    CHECK(mentions(explained.steps, "group arch=sm_90a cu_num=132 next_n=2 heads=64 head_dim=128 block_kv=64 "
                                    "clean_logits=0: 3 tuned row(s) (0 from the user database, 3 from the system"));
    CHECK(mentions(explained.steps, "batch 20: the largest tuned batch not above it is 8 (tuned: 1, 8, 64)"));
    CHECK(mentions(explained.steps, "paged_mqa_logits_tuned_deepseek_v32.csv:3"));
    // A user row between the system's takes part in the rule, and one of the same key replaces it.
    db.insert(decode_row(132, 0, 16, std::string(kLds8)));
    db.insert(decode_row(132, 0, 8, std::string(kW1)));
    CHECK(pick(db, decode_key(132, 0, 20)) == kLds8);
    CHECK(pick(db, decode_key(132, 0, 9)) == kW1);
    CHECK(db.rows<PagedShapeKey>().size() == 7);
    CHECK(db.user_rows<PagedShapeKey>().size() == 2);
    CHECK(db.system_rows<PagedShapeKey>().size() == 6);
}

TEST_CASE("paged lookup: a mode without rows uses the other's, an untuned SM count the nearest, as in prefill") {
    BothTablesFixture fixture;
    TuningDb db(fixture.system_db, fixture.user_db);
    // Mode 1 has its own rows at 132 SMs (batch 1 only: below-all and floor both give it).
    CHECK(pick(db, decode_key(132, 1, 500)) == kLds8);
    // next_n=1 has only mode 0 rows: a clean_logits=1 call is served by them, and explain says so.
    const PagedLookupResult other = db.explain(decode_key(132, 1, 4, 1));
    REQUIRE(other.row);
    CHECK(other.row->variant == kNext1);
    REQUIRE(other.fallbacks.size() == 1);
    CHECK(other.fallbacks[0].find("no rows tuned with clean_logits=1: the clean_logits=0 rows serve") != std::string::npos);
    CHECK(other.fallbacks[0].find("`mqajit tune --op paged_mqa_logits --clean-logits 1`") != std::string::npos);
    // An untuned SM count: the nearest tuned one of the same next_n, heads, head_dim and block_kv.
    CHECK(pick(db, decode_key(120, 1, 1)) == kW2);    // 114 is nearer than 132, and has mode 1
    CHECK(pick(db, decode_key(130, 0, 8)) == kW2);    // 132, mode 0
    const PagedLookupResult nearest = db.explain(decode_key(100, 0, 8));
    REQUIRE(nearest.fallbacks.size() == 2);         // 114 is nearest, and it has mode 1 only
    CHECK(nearest.fallbacks[0].find("arch=sm_90a next_n=2 heads=64 head_dim=128 block_kv=64 is not tuned at cu_num "
                                    "100: the nearest tuned cu_num, 114, serves (tuned: 114, 132") != std::string::npos);
    // Other identity columns never stand in: another next_n, block_kv or heads is the baseline.
    CHECK(pick(db, decode_key(132, 0, 8, 3)) == "baseline");
    PagedShapeKey bkv128 = decode_key(132, 0, 8);
    bkv128.block_kv = 128;
    CHECK(pick(db, bkv128) == "baseline");
    CHECK(pick(db, decode_key(132, 0, 8, 2, 32)) == "baseline");
    // With the nearest SM count off (MQAJIT_NEAREST_CU_NUM=0) an untuned SM count is the baseline, and says why.
    TuningDb strict(fixture.system_db, fixture.user_db, {.nearest_cu_num = false});
    const PagedLookupResult declined = strict.explain(decode_key(120, 0, 8));
    CHECK_FALSE(declined.row);
    CHECK(mentions(declined.steps, "is tuned only at cu_num 114, 132, not 120"));
    CHECK(pick(strict, decode_key(132, 1, 4, 1)) == kNext1);  // the same device's other mode still serves
}

TEST_CASE("paged lookup: an empty or absent decode table answers the baseline and says why") {
    TempDir dir("paged-empty");
    const auto empty = dir.path() / "paged_mqa_logits_tuned.csv";
    write_text(empty, std::string(kPagedHeader));
    const auto built = tuning::build_system_db(dir.path() / "system.db", {empty});
    CHECK(built.paged_mqa_logits.rows.empty());
    CHECK(built.paged_mqa_logits.problems.empty());
    for (const std::optional<std::filesystem::path>& system : {std::optional(dir.path() / "system.db"),
                                                                std::optional<std::filesystem::path>()}) {
        TuningDb db(system, dir.path() / "user.db");
        CHECK(db.lookup(decode_key(132, 0, 32)) == nullptr);
        const PagedLookupResult explained = db.explain(decode_key(132, 0, 32));
        CHECK_FALSE(explained.row);
        REQUIRE(explained.steps.size() == 2);
        CHECK(explained.steps[0] == "no tuned rows for group arch=sm_90a cu_num=132 next_n=2 heads=64 head_dim=128 "
                                    "block_kv=64 clean_logits=0: use the baseline kernel");
        CHECK(explained.steps[1].find("the paged_mqa_logits table has no tuned rows at all") != std::string::npos);
        CHECK(explained.fallbacks.empty());
    }
}

TEST_CASE("paged and prefill tables: one database, neither sees the other's rows, an insert leaves the other alone") {
    BothTablesFixture fixture;
    TuningDb db(fixture.system_db, fixture.user_db);
    CHECK(db.rows<ShapeKey>().size() == 1);
    CHECK(db.rows<PagedShapeKey>().size() == 6);
    const TunedRow* prefill = db.lookup(gfx950_key(32, 128, 1, 1024, 4096));
    REQUIRE(prefill != nullptr);
    CHECK(prefill->variant == "mfma32x32x64_bkv64_r2_w2_lds3");
    // Inserting decode rows keeps every prefill answer (and its pointer) as it was.
    db.insert(decode_row(132, 0, 4, std::string(kW2)));
    CHECK(db.lookup(gfx950_key(32, 128, 1, 1024, 4096)) == prefill);
    CHECK(db.user_rows<ShapeKey>().empty());
    CHECK(db.user_rows<PagedShapeKey>().size() == 1);
    {
        sqlite::Database database(fixture.user_db, sqlite::OpenMode::read_only);
        CHECK(tuning::count_rows<ShapeKey>(database) == 0);
        CHECK(tuning::count_rows<PagedShapeKey>(database) == 1);
    }
    // The decode row is malformed for the prefill table's rules and the other way round: each insert checks its own.
    PagedTunedRow bad = decode_row(132, 0, 4, "not_a_variant");
    CHECK_THROWS_AS(db.insert(bad), Error);
    CHECK(db.user_rows<PagedShapeKey>().size() == 1);
}

TEST_CASE("paged check: a row whose variant cannot run at its key is refused by check and import") {
    const PagedTunedRow runs = decode_row(132, 0, 1, std::string(kW2));
    CHECK_FALSE(tuning::unrunnable_problem(runs));
    PagedTunedRow wrong_next_n = decode_row(132, 0, 1, std::string(kNext1));  // r1 on a next_n=2 row
    CHECK(tuning::unrunnable_problem(wrong_next_n).value_or("").find("r=1 must equal the call's next_n, 2") !=
          std::string::npos);
    PagedTunedRow wrong_block = decode_row(132, 0, 1, std::string(kW2));
    wrong_block.key.block_kv = 128;
    CHECK(tuning::unrunnable_problem(wrong_block).value_or("").find("must equal the cache's block_kv, 128") !=
          std::string::npos);
    PagedTunedRow prefill_variant = decode_row(132, 0, 1, "wgmma64x128x32_bkv64_r2_w2_lds4");
    CHECK(tuning::unrunnable_problem(prefill_variant).value_or("").find("runs pwgmma or pmfma variants") != std::string::npos);
    CHECK_FALSE(tuning::unrunnable_problem(decode_row(132, 0, 1, "baseline")));
    // A prefill row naming a decode kernel is refused by the prefill rules.
    const TunedRow prefill = make_row("sm_90a", 132, 64, 128, 1, 1, std::string(kW2), 1);
    CHECK(tuning::unrunnable_problem(prefill).value_or("").find("paged_mqa_logits (decode) kernel") != std::string::npos);

    TempDir dir("paged-check");
    const auto file = dir.path() / "paged_mqa_logits_tuned_x.csv";
    write_text(file, std::string(kPagedHeader) + "sm_90a,132,2,64,128,64,0,1,jit," + std::string(kW2) + ",5\n" +
                         "sm_90a,132,2,64,128,64,0,8,jit," + std::string(kNext1) + ",5\n");
    const auto report = tuning::check_config_files<PagedShapeKey>({file});
    CHECK(report.num_rows == 2);
    REQUIRE(report.problems.size() == 1);
    CHECK(report.problems[0].place == file.string() + ":3");
    CHECK_FALSE(report.ok());
}
