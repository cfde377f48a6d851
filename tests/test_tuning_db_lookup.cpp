// The lookup rule over real SQLite files: exact hits, lengths between, below and above the tuned
// ones, missing groups, user rows over system rows, explain's steps, and concurrent lookups.

#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tuning_db/row_table.hpp"
#include "tuning_db/system_db.hpp"
#include "tuning_db/tuned_group.hpp"
#include "tuning_db/tuning_db.hpp"

using namespace mqajit;
using namespace mqajit::testing;

namespace {

// A 2 x 3 grid of GLM-5 rows: seq_len_kv {4096, 16384} x seq_len {256, 1024, 4096}; each
// variant's bkv names its seq_len_kv and its r names its seq_len, so a wrong pick shows.
constexpr std::string_view kGridCsv =
    "gfx950,256,32,128,256,4096,jit,mfma32x32x64_bkv64_r1_w2_lds2,1\n"
    "gfx950,256,32,128,1024,4096,jit,mfma32x32x64_bkv64_r2_w2_lds2,2\n"
    "gfx950,256,32,128,4096,4096,jit,mfma32x32x64_bkv64_r4_w2_lds2,3\n"
    "gfx950,256,32,128,256,16384,jit,mfma32x32x64_bkv128_r1_w2_lds2,4\n"
    "gfx950,256,32,128,1024,16384,jit,mfma32x32x64_bkv128_r2_w2_lds2,5\n"
    "gfx950,256,32,128,4096,16384,jit,mfma32x32x64_bkv128_r4_w2_lds2,6\n"
    "gfx950,256,64,128,256,4096,triton,whatever,7\n";

// A system database built from the grid, plus a user database path, in a fresh folder.
struct GridFixture : SystemDbFixture {
    GridFixture() : SystemDbFixture("lookup", std::string(kCsvHeader) + std::string(kGridCsv), 7) {}
};

// The grid's rows come from a CSV without a clean_logits column: clean_logits=1 rows.
ShapeKey glm5(std::int64_t seq_len, std::int64_t seq_len_kv) { return gfx950_key(32, 128, 1, seq_len, seq_len_kv); }

std::string pick(const TuningDb& db, std::int64_t seq_len, std::int64_t seq_len_kv) {
    const TunedRow* row = db.lookup(glm5(seq_len, seq_len_kv));
    return row ? row->variant : "baseline";
}

}  // namespace

TEST_CASE("tuning lookup: exact hits answer their own row") {
    GridFixture fixture;
    TuningDb db(fixture.system_db, fixture.user_db);
    CHECK(pick(db, 256, 4096) == "mfma32x32x64_bkv64_r1_w2_lds2");
    CHECK(pick(db, 1024, 16384) == "mfma32x32x64_bkv128_r2_w2_lds2");
    CHECK(pick(db, 4096, 16384) == "mfma32x32x64_bkv128_r4_w2_lds2");
    const TunedRow* row = db.lookup(glm5(1024, 4096));
    REQUIRE(row != nullptr);
    CHECK(row->key == glm5(1024, 4096));
    CHECK(row->us == 2.0);
    CHECK(row->origin == fixture.csv.string() + ":3");
}

TEST_CASE("tuning lookup: between rows, take the largest tuned length not above, seq_len_kv first") {
    GridFixture fixture;
    TuningDb db(fixture.system_db, fixture.user_db);
    CHECK(pick(db, 1000, 4096) == "mfma32x32x64_bkv64_r1_w2_lds2");
    CHECK(pick(db, 1025, 16383) == "mfma32x32x64_bkv64_r2_w2_lds2");
    CHECK(pick(db, 3000, 10000) == "mfma32x32x64_bkv64_r2_w2_lds2");
    CHECK(pick(db, 4095, 16384) == "mfma32x32x64_bkv128_r2_w2_lds2");
}

TEST_CASE("tuning lookup: below every tuned length uses the smallest, above all uses the largest") {
    GridFixture fixture;
    TuningDb db(fixture.system_db, fixture.user_db);
    CHECK(pick(db, 1, 1) == "mfma32x32x64_bkv64_r1_w2_lds2");
    CHECK(pick(db, 100, 16384) == "mfma32x32x64_bkv128_r1_w2_lds2");
    CHECK(pick(db, 2048, 100) == "mfma32x32x64_bkv64_r2_w2_lds2");
    CHECK(pick(db, 1 << 20, std::int64_t{1} << 40) == "mfma32x32x64_bkv128_r4_w2_lds2");
}

TEST_CASE("tuning lookup: a group with no rows answers the baseline (nullptr)") {
    GridFixture fixture;
    TuningDb db(fixture.system_db, fixture.user_db);
    const ShapeKey other_arch{.arch = "gfx942", .cu_num = 256, .heads = 32, .head_dim = 128, .clean_logits = 1,
                              .seq_len = 1024, .seq_len_kv = 4096};
    CHECK(db.lookup(other_arch) == nullptr);
    // Another SM count has no rows of its own (the nearest tuned one stands in unless that is turned off).
    const ShapeKey other_cu_num{.arch = "gfx950", .cu_num = 304, .heads = 32, .head_dim = 128, .clean_logits = 1,
                                .seq_len = 1024, .seq_len_kv = 4096};
    CHECK(TuningDb(fixture.system_db, fixture.user_db, {.nearest_cu_num = false}).lookup(other_cu_num) == nullptr);
    CHECK(db.lookup(other_cu_num) != nullptr);
    CHECK(db.lookup(gfx950_key(32, 64, 1, 1024, 4096)) == nullptr);
    // A tuned row may itself choose the baseline kernel.
    const TunedRow* row = db.lookup(gfx950_key(64, 128, 1, 1024, 4096));
    REQUIRE(row != nullptr);
    CHECK(row->backend == "baseline");
    const LookupResult explained = db.explain(other_arch);
    CHECK_FALSE(explained.row.has_value());
    REQUIRE(explained.steps.size() == 1);
    CHECK(explained.steps[0].find("no tuned rows") != std::string::npos);
    CHECK(explained.steps[0].find("baseline") != std::string::npos);
}

TEST_CASE("tuning lookup: explain names each step and agrees with lookup") {
    GridFixture fixture;
    TuningDb db(fixture.system_db, fixture.user_db);
    const LookupResult result = db.explain(glm5(3000, 10000));
    REQUIRE(result.row.has_value());
    CHECK(result.row->variant == "mfma32x32x64_bkv64_r2_w2_lds2");
    REQUIRE(result.steps.size() == 4);
    CHECK(result.steps[0].find("6 tuned row(s)") != std::string::npos);
    CHECK(result.steps[1].find("seq_len_kv 10000") != std::string::npos);
    CHECK(result.steps[1].find("is 4096") != std::string::npos);
    CHECK(result.steps[2].find("seq_len 3000") != std::string::npos);
    CHECK(result.steps[2].find("is 1024") != std::string::npos);
    CHECK(result.steps[3].find("mfma32x32x64_bkv64_r2_w2_lds2") != std::string::npos);
    CHECK(result.steps[3].find("table.csv:3") != std::string::npos);
    const LookupResult below = db.explain(glm5(1, 1));
    CHECK(below.steps[1].find("below every tuned seq_len_kv") != std::string::npos);
    CHECK(below.steps[2].find("below every tuned seq_len") != std::string::npos);
    for (std::int64_t s : {1, 256, 700, 1024, 5000}) {
        for (std::int64_t n : {1, 4096, 9000, 16384, 70000}) {
            const TunedRow* fast = db.lookup(glm5(s, n));
            const LookupResult slow = db.explain(glm5(s, n));
            REQUIRE(fast != nullptr);
            REQUIRE(slow.row.has_value());
            CHECK(fast->key == slow.row->key);
        }
    }
}

TEST_CASE("tuning lookup: user rows replace system rows of the same key and join the rule") {
    GridFixture fixture;
    TuningDb db(fixture.system_db, fixture.user_db);
    CHECK(pick(db, 1024, 4096) == "mfma32x32x64_bkv64_r2_w2_lds2");
    db.insert(glm5_row(1024, 4096, "mfma32x32x64_bkv256_r2_w4_lds3", 1.5));
    db.insert(glm5_row(256, 8192, "mfma32x32x64_bkv256_r1_w4_lds3", 1.5));
    CHECK(pick(db, 1024, 4096) == "mfma32x32x64_bkv256_r2_w4_lds3");
    const TunedRow* row = db.lookup(glm5(1024, 4096));
    REQUIRE(row != nullptr);
    CHECK(row->origin == "user:" + fixture.user_db.string());
    // The user's seq_len_kv 8192 now sits between the system's 4096 and 16384.
    CHECK(pick(db, 5000, 9000) == "mfma32x32x64_bkv256_r1_w4_lds3");
    CHECK(pick(db, 5000, 8191) == "mfma32x32x64_bkv64_r4_w2_lds2");
    // A fresh TuningDb reads the same answers from disk.
    TuningDb reopened(fixture.system_db, fixture.user_db);
    CHECK(pick(reopened, 1024, 4096) == "mfma32x32x64_bkv256_r2_w4_lds3");
    CHECK(reopened.user_rows().size() == 2);
    CHECK(reopened.system_rows().size() == 7);
    CHECK(reopened.rows().size() == 8);  // 7 system + 2 user - 1 replaced
    const auto explained = reopened.explain(glm5(1024, 4096));
    CHECK(explained.steps[0].find("7 tuned row(s) (2 from the user database, 5 from the system database)") != std::string::npos);
}

TEST_CASE("tuning lookup: a pointer from lookup stays valid after an insert replaces its group") {
    GridFixture fixture;
    TuningDb db(fixture.system_db, fixture.user_db);
    const TunedRow* before = db.lookup(glm5(256, 4096));
    REQUIRE(before != nullptr);
    db.insert(glm5_row(256, 4096, "mfma32x32x64_bkv256_r1_w4_lds3"));
    CHECK(before->variant == "mfma32x32x64_bkv64_r1_w2_lds2");
    CHECK(db.lookup(glm5(256, 4096))->variant == "mfma32x32x64_bkv256_r1_w4_lds3");
}

TEST_CASE("tuning lookup: after a group is loaded, lookups never read SQLite again") {
    GridFixture fixture;
    TuningDb db(fixture.system_db, fixture.user_db);
    db.insert(glm5_row(256, 8192, "mfma32x32x64_bkv256_r1_w4_lds3"));
    CHECK(pick(db, 256, 8192) == "mfma32x32x64_bkv256_r1_w4_lds3");
    {
        // Another writer changes the file behind the loaded group's back.
        sqlite::Database other(fixture.user_db, sqlite::OpenMode::read_write);
        other.set_busy_timeout(std::chrono::milliseconds(2000));
        tuning::upsert_row(other, glm5_row(256, 8192, "mfma32x32x64_bkv512_r1_w4_lds3"));
    }
    CHECK(pick(db, 256, 8192) == "mfma32x32x64_bkv256_r1_w4_lds3");
    // A group not loaded yet does read the file.
    TuningDb fresh(fixture.system_db, fixture.user_db);
    CHECK(pick(fresh, 256, 8192) == "mfma32x32x64_bkv512_r1_w4_lds3");
}

TEST_CASE("tuning lookup: many threads looking up at once agree with one thread") {
    GridFixture fixture;
    const std::vector<std::int64_t> lengths = {1, 255, 256, 1000, 1024, 4096, 9999, 16384, 100000};
    // Several groups, so first loads race with lookups of loaded groups.
    std::vector<ShapeKey> shapes;
    for (int heads : {32, 64, 16})
        for (std::int64_t s : lengths)
            for (std::int64_t n : lengths) shapes.push_back(gfx950_key(heads, 128, 1, s, n));
    std::vector<std::optional<ShapeKey>> expected;
    {
        TuningDb reference(fixture.system_db, fixture.user_db);
        for (const ShapeKey& shape : shapes) {
            const TunedRow* row = reference.lookup(shape);
            expected.push_back(row ? std::optional(row->key) : std::nullopt);
        }
    }
    TuningDb db(fixture.system_db, fixture.user_db);
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            for (int round = 0; round < 50; ++round) {
                for (std::size_t i = 0; i < shapes.size(); ++i) {
                    const std::size_t at = (i + static_cast<std::size_t>(t) * 7) % shapes.size();
                    const TunedRow* row = db.lookup(shapes[at]);
                    const std::optional<ShapeKey> got = row ? std::optional(row->key) : std::nullopt;
                    if (got != expected[at]) ++mismatches;
                }
            }
        });
    }
    for (auto& thread : threads) thread.join();
    CHECK(mismatches.load() == 0);
    CHECK(expected[0].has_value());                   // heads 32 is tuned
    CHECK_FALSE(expected.back().has_value());         // heads 16 is not
}

TEST_CASE("tuning lookup: TunedGroup's two searches over a hand-made group") {
    std::vector<TunedRow> rows = {glm5_row(1024, 8192, "mfma32x32x64_bkv64_r2_w2_lds2"),
                                  glm5_row(256, 8192, "mfma32x32x64_bkv64_r1_w2_lds2"),
                                  glm5_row(512, 2048, "mfma32x32x64_bkv64_r4_w2_lds2")};
    const tuning::TunedGroup<ShapeKey> group(rows);
    const auto at = [](std::int64_t seq_len, std::int64_t seq_len_kv) { return gfx950_key(32, 128, 1, seq_len, seq_len_kv); };
    CHECK(group.size() == 3);
    CHECK(group.find(at(4000, 9000))->key.seq_len == 1024);
    CHECK(group.find(at(300, 9000))->key.seq_len == 256);
    CHECK(group.find(at(300, 8191))->key.seq_len == 512);  // kv 2048 has only seq_len 512: below-all takes it
    CHECK(group.find(at(1, 1))->key.seq_len == 512);
    CHECK(tuning::TunedGroup<ShapeKey>({}).find(at(1, 1)) == nullptr);
}

TEST_CASE("tuning lookup: insert rejects malformed rows before writing anything") {
    TempDir dir("lookup-insert");
    TuningDb db(std::nullopt, dir.path() / "tuning.db");
    std::vector<TunedRow> batch = {glm5_row(256, 4096, "mfma32x32x64_bkv64_r1_w2_lds2"),
                                   glm5_row(512, 4096, "not_a_variant")};
    CHECK_THROWS_AS(db.insert(batch), Error);
    CHECK(db.user_rows().empty());
    TunedRow zero = glm5_row(0, 4096, "mfma32x32x64_bkv64_r1_w2_lds2");
    CHECK_THROWS_AS(db.insert(zero), Error);
    CHECK_FALSE(std::filesystem::exists(dir.path() / "tuning.db"));
}
