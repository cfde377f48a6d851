// The decode table's files and databases: AITER's file names pick the table a CSV belongs to (the
// prefill loader never reads paged_mqa_logits*.csv, the decode loader never the prefill files),
// the shipped untuned decode shapes, the system database holding both tables, and the schema
// version 3 that added the decode table (a version 2 user database is migrated to the current one).

#include <doctest/doctest.h>

#include <chrono>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "mqajit/error.hpp"
#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tuning_db/config_files.hpp"
#include "tuning_db/csv.hpp"
#include "tuning_db/row_table.hpp"
#include "tuning_db/sqlite.hpp"
#include "tuning_db/system_db.hpp"
#include "tuning_db/tuning_db.hpp"
#include "tuning_db/user_db.hpp"

using namespace mqajit;
using namespace mqajit::testing;

namespace {

constexpr std::string_view kPagedHeader = "gfx,cu_num,next_n,heads,head_dim,block_kv,clean_logits,batch,backend,variant,us\n";
constexpr std::string_view kPagedLine = "sm_90a,132,1,64,128,64,0,8,jit,pwgmma64x64x32_bkv64_r1_w2_lds4,5\n";
constexpr std::string_view kPrefillLine = "gfx950,256,32,128,1024,4096,jit,mfma32x32x64_bkv64_r2_w2_lds3,9\n";

std::set<std::string> names(const std::vector<std::filesystem::path>& files) {
    std::set<std::string> result;
    for (const auto& file : files) result.insert(file.parent_path().filename().string() + "/" + file.filename().string());
    return result;
}

PagedTunedRow paged_row(std::int64_t batch) {
    PagedTunedRow row;
    row.key = {.arch = "sm_90a", .cu_num = 132, .next_n = 1, .heads = 64, .head_dim = 128, .block_kv = 64,
               .clean_logits = 0, .batch = batch};
    row.backend = "jit";
    row.variant = "pwgmma64x64x32_bkv64_r1_w2_lds4";
    row.us = 3;
    return row;
}

}  // namespace

TEST_CASE("paged files: a file's name says its table, each loader lists only its own shipped files") {
    CHECK(tuning::config_file_op("a/paged_mqa_logits_tuned.csv") == "paged_mqa_logits");
    CHECK(tuning::config_file_op("a/paged_mqa_logits_tuned_glm5.csv") == "paged_mqa_logits");
    CHECK(tuning::config_file_op("a/paged_mqa_logits_tuned_x_tuned_mqa_logits.csv") == "paged_mqa_logits");
    CHECK(tuning::config_file_op("a/glm5_tuned_mqa_logits.csv") == "mqa_logits");
    CHECK(tuning::config_file_op("a/anything.csv") == "mqa_logits");

    TempDir dir("paged-files");
    const auto configs = dir.path() / "configs";
    for (const char* name : {"tuned_mqa_logits.csv", "model_configs/glm5_tuned_mqa_logits.csv",
                             "model_configs/glm5_untuned_mqa_logits.csv", "paged_mqa_logits_tuned.csv",
                             "model_configs/paged_mqa_logits_tuned_glm5.csv",
                             "model_configs/paged_mqa_logits_untuned_glm5.csv",
                             "model_configs/paged_mqa_logits_tuned_x_tuned_mqa_logits.csv",
                             "model_configs/paged_mqa_logits_tunedglm5.csv", "model_configs/notes.txt"}) {
        write_text(configs / name, "x\n");
    }
    CHECK(names(tuning::shipped_config_files<ShapeKey>(configs)) ==
          std::set<std::string>{"configs/tuned_mqa_logits.csv", "model_configs/glm5_tuned_mqa_logits.csv"});
    CHECK(names(tuning::shipped_config_files<PagedShapeKey>(configs)) ==
          std::set<std::string>{"configs/paged_mqa_logits_tuned.csv", "model_configs/paged_mqa_logits_tuned_glm5.csv",
                                "model_configs/paged_mqa_logits_tuned_x_tuned_mqa_logits.csv"});
}

TEST_CASE("paged files: the shipped folder's files go to their own table only") {
    const auto prefill = tuning::shipped_config_files<ShapeKey>(shipped_configs_dir());
    const auto decode = tuning::shipped_config_files<PagedShapeKey>(shipped_configs_dir());
    REQUIRE_FALSE(prefill.empty());
    REQUIRE_FALSE(decode.empty());
    for (const auto& file : prefill) {
        CAPTURE(file);
        CHECK_FALSE(file.filename().string().starts_with("paged_mqa_logits"));
        CHECK(tuning::read_csv_file<ShapeKey>(file).problems.empty());
    }
    for (const auto& file : decode) {
        CAPTURE(file);
        CHECK(file.filename().string().starts_with("paged_mqa_logits_tuned"));
        const auto table = tuning::read_csv_file<PagedShapeKey>(file);
        CHECK(table.problems.empty());
        // Each model's file holds its H200-tuned rows (next_n 1-4 x 12 batches); the generic file is a header.
        const bool per_model = file.filename().string().starts_with("paged_mqa_logits_tuned_");
        CHECK(table.rows.size() == (per_model ? 48u : 0u));
    }
    // Read as the other table, each file fails on its header (never a row read under the wrong key).
    for (const auto& file : prefill) CHECK(tuning::read_csv_file<PagedShapeKey>(file).rows.empty());
    for (const auto& file : decode) CHECK_FALSE(tuning::read_csv_file<ShapeKey>(file).problems.empty());
}

TEST_CASE("paged files: the shipped untuned files list GLM-5 and DeepSeek-V3.2 decode shapes for sm_90a") {
    const std::vector<std::int64_t> batches = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048};
    for (const auto& [model, heads] : {std::pair{"glm5", 32}, std::pair{"deepseek_v32", 64}}) {
        CAPTURE(model);
        const std::string text =
            read_text(shipped_configs_dir() / "model_configs" / fmt::format("paged_mqa_logits_untuned_{}.csv", model));
        std::istringstream lines(text);
        std::string line;
        REQUIRE(std::getline(lines, line));
        CHECK(line == "gfx,cu_num,next_n,heads,head_dim,block_kv,clean_logits,batch,context_len");
        std::set<std::tuple<int, std::int64_t>> shapes;
        while (std::getline(lines, line)) {
            const auto fields = tuning::split_csv_line(line);
            REQUIRE(fields.size() == 9);
            CHECK(fields[0] == "sm_90a");
            CHECK(fields[1] == "132");
            CHECK(fields[3] == std::to_string(heads));
            CHECK(fields[4] == "128");
            CHECK(fields[5] == "64");
            CHECK(fields[6] == "0");  // what engines call
            const std::int64_t batch = std::stoll(fields[7]);
            shapes.emplace(std::stoi(fields[2]), batch);
            // Contexts of the bar (4k, 32k, 128k) while batch x context stays within 16M tokens.
            std::string expected;
            for (std::int64_t context : {4096, 32768, 131072})
                if (batch * context <= 16 * 1024 * 1024) expected += (expected.empty() ? "" : ";") + std::to_string(context);
            CHECK(fields[8] == expected);
        }
        std::set<std::tuple<int, std::int64_t>> wanted;
        for (int next_n = 1; next_n <= 4; ++next_n)
            for (std::int64_t batch : batches) wanted.emplace(next_n, batch);
        CHECK(shapes == wanted);
    }
}

TEST_CASE("paged files: build-system puts each CSV's rows in the table its name says") {
    TempDir dir("paged-build");
    const auto prefill = dir.path() / "model_configs" / "glm5_tuned_mqa_logits.csv";
    const auto decode = dir.path() / "model_configs" / "paged_mqa_logits_tuned_deepseek_v32.csv";
    const auto misnamed = dir.path() / "model_configs" / "paged_mqa_logits_tuned_oops.csv";  // a prefill table
    write_text(prefill, std::string(kCsvHeader) + std::string(kPrefillLine));
    write_text(decode, std::string(kPagedHeader) + std::string(kPagedLine));
    write_text(misnamed, std::string(kCsvHeader) + std::string(kPrefillLine));
    const auto built = tuning::build_system_db(dir.path() / "system.db", {prefill, decode, misnamed});
    CHECK(built.mqa_logits.files == std::vector{prefill});
    CHECK(built.paged_mqa_logits.files == std::vector{decode, misnamed});
    CHECK(built.mqa_logits.rows.size() == 1);
    CHECK(built.paged_mqa_logits.rows.size() == 1);
    REQUIRE(built.paged_mqa_logits.problems.size() == 1);  // the misnamed file fails on its header
    CHECK(built.paged_mqa_logits.problems[0].place == misnamed.string() + ":1");
    sqlite::Database database(dir.path() / "system.db", sqlite::OpenMode::read_only);
    CHECK(tuning::select_all<ShapeKey>(database).at(0).origin == prefill.string() + ":2");
    CHECK(tuning::select_all<PagedShapeKey>(database).at(0).origin == decode.string() + ":2");
    CHECK(tuning::meta(database, "source_files").value_or("").find("paged_mqa_logits_tuned_deepseek_v32.csv") !=
          std::string::npos);
}

TEST_CASE("paged files: the build's system database has the shipped decode rows of both models") {
    const auto built = std::filesystem::path(MQAJIT_BINARY_DIR) / "share" / "mqajit" / "system_tuning.db";
    REQUIRE_MESSAGE(std::filesystem::exists(built), "build the mqajit_system_db target (plain `ninja` does)");
    sqlite::Database database(built, sqlite::OpenMode::read_only);
    const auto rows = tuning::select_all<PagedShapeKey>(database);
    CHECK(rows.size() == 96);
    for (const auto& row : rows) {
        CAPTURE(row.origin);
        CHECK(row.key.arch == "sm_90a");
        CHECK((row.key.heads == 32 || row.key.heads == 64));
        CHECK(row.origin.find("paged_mqa_logits_tuned_") != std::string::npos);
    }
    CHECK(tuning::meta(database, "source_files").value_or("").find("tuning_db/configs/paged_mqa_logits_tuned.csv") !=
          std::string::npos);
    CHECK(tuning::meta(database, "source_files").value_or("").find("untuned") == std::string::npos);
}

namespace {

// A user database as mqajit wrote it before the decode table (schema version 2).
void make_version_2_db(const std::filesystem::path& file) {
    make_version_2_or_3_db(file, 2, "gfx950", 256, "mfma32x32x64_bkv64_r2_w2_lds3");
}

}  // namespace

TEST_CASE("paged db: a version 2 user database gains the decode table, keeping its rows") {
    TempDir dir("paged-migrate");
    const auto file = dir.path() / "tuning.db";
    make_version_2_db(file);
    {
        LogCapture capture;
        TuningDb db(std::nullopt, file);
        CHECK_FALSE(db.user_db_in_memory());
        CHECK(capture.warnings() == 1);
        CHECK(capture.count("from schema version 2 to 5 (which adds the logits_dtype key, the paged_mqa_logits "
                            "table and the mqa_topk table): its 1 prefill row(s) are float32 rows") == 1);
        CHECK(db.user_rows<ShapeKey>().size() == 1);
        CHECK(db.lookup(gfx950_key(32, 128, 1, 2000, 5000)) != nullptr);
        db.insert(paged_row(16));
        CHECK(db.lookup(PagedShapeKey{.arch = "sm_90a", .cu_num = 132, .next_n = 1, .heads = 64, .head_dim = 128,
                                      .block_kv = 64, .clean_logits = 0, .batch = 100}) != nullptr);
    }
    sqlite::Database database(file, sqlite::OpenMode::read_only);
    CHECK(tuning::schema_version(database) == 5);
    CHECK(tuning::count_rows<ShapeKey>(database) == 1);
    CHECK(tuning::count_rows<PagedShapeKey>(database) == 1);
}

TEST_CASE("paged db: a version 2 system database is refused with what to do") {
    TempDir dir("paged-old-system");
    make_version_2_db(dir.path() / "system.db");
    try {
        tuning::SystemDb system(dir.path() / "system.db");
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::database);
        CHECK(std::string(e.what()).find("schema version 2, older than the version 5") != std::string::npos);
        CHECK(std::string(e.what()).find("mqajit db build-system") != std::string::npos);
    }
    LogCapture capture;
    TuningDb db(dir.path() / "system.db", dir.path() / "user.db");
    CHECK_FALSE(db.system_db_path());
    CHECK(capture.count("older than the version 5") == 1);
}

TEST_CASE("paged db: a user database that falls back to memory keeps both tables' rows") {
    TempDir dir("paged-locked");
    const auto file = dir.path() / "tuning.db";
    {
        TuningDb db(std::nullopt, file);
        db.insert(glm5_row(1024, 4096, "mfma32x32x64_bkv64_r2_w2_lds3"));
        db.insert(paged_row(8));
    }
    sqlite::Database holder(file, sqlite::OpenMode::read_write);
    holder.execute("BEGIN EXCLUSIVE");
    LogCapture capture;
    tuning::UserDb user(file, std::chrono::milliseconds(20));
    user.insert(std::vector{paged_row(64)});
    CHECK(user.in_memory());
    CHECK(user.all_rows<ShapeKey>().size() == 1);       // the file's prefill row
    CHECK(user.all_rows<PagedShapeKey>().size() == 2);  // the file's decode row and the new one
    CHECK(capture.warnings() == 1);
    holder.execute("ROLLBACK");
}
