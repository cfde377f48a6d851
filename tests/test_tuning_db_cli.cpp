// `mqajit db ...` end to end: the built CLI run as a user would, on SQLite files in a temp folder.

#include <doctest/doctest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tuning_db/row_table.hpp"
#include "tuning_db/sqlite.hpp"
#include "tuning_db/tuning_db.hpp"

using namespace mqajit;
using namespace mqajit::testing;

namespace {

std::string quoted(const std::filesystem::path& path) { return fmt::format("'{}'", path.string()); }

// A temp folder with a system database built by the CLI from a small GLM-5 CSV.
struct CliFixture {
    TempDir dir{"cli"};
    std::filesystem::path csv = dir.path() / "configs" / "glm5_tuned_mqa_logits.csv";
    std::filesystem::path system_db = dir.path() / "share" / "system.db";
    std::filesystem::path user_db = dir.path() / "user" / "tuning.db";

    CliFixture() {
        write_text(csv, std::string(kCsvHeader) +
                            "gfx950,256,32,128,256,4096,flydsl,mfma32x32x64_bkv64_r1_w2_lds2,18.4\n"
                            "gfx950,256,32,128,2048,4096,flydsl,mfma32x32x64_bkv128_r2_w4_lds3,56.0\n"
                            "gfx950,256,32,128,2048,8192,flydsl,mfma32x32x64_bkv64_r2_w4_lds3,98.9\n");
        std::string output;
        REQUIRE(run("db build-system --out " + quoted(system_db) + " " + quoted(csv), &output) == 0);
        REQUIRE(output.find("wrote 3 row(s) from 1 file(s)") != std::string::npos);
    }

    // Runs `mqajit <args>` with this fixture's databases.
    int db(const std::string& args, std::string* output) const {
        return run("db --db " + quoted(user_db) + " --system-db " + quoted(system_db) + " " + args, output);
    }
    static int run(const std::string& args, std::string* output) {
        return run_command("env -u MQAJIT_ARCH -u MQAJIT_TUNING_DB -u MQAJIT_SYSTEM_DB " + quoted(cli_path()) +
                               " " + args,
                           output);
    }
};

bool contains(const std::string& text, std::string_view needle) { return text.find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("tuning cli: lookup prints each step and the answering row") {
    CliFixture fixture;
    std::string output;
    CHECK(fixture.db("lookup --arch gfx950 --cu-num 256 --heads 32 --head-dim 128 --seq-len 3000 --seq-len-kv 9000",
                     &output) == 0);
    CHECK(contains(output, "seq_len_kv 9000: the largest tuned seq_len_kv not above it is 8192"));
    CHECK(contains(output, "seq_len 3000: the largest tuned seq_len at seq_len_kv=8192 not above it is 2048"));
    CHECK(contains(output, "glm5_tuned_mqa_logits.csv:4"));
    CHECK(output.ends_with("mfma32x32x64_bkv64_r2_w4_lds3\n"));

    // Spellings Arch::parse accepts are looked up under the canonical name.
    CHECK(fixture.db("lookup --arch gfx950:xnack- --cu-num 256 --heads 32 --head-dim 128 --seq-len 256 "
                     "--seq-len-kv 4096",
                     &output) == 0);
    CHECK(output.ends_with("mfma32x32x64_bkv64_r1_w2_lds2\n"));
    CHECK(fixture.db("lookup --arch gfx942 --cu-num 304 --heads 32 --head-dim 128 --seq-len 1 --seq-len-kv 1",
                     &output) == 0);
    CHECK(contains(output, "no tuned rows"));
    CHECK(output.ends_with("baseline\n"));
}

TEST_CASE("tuning cli: lookup --json and MQAJIT_ARCH as the default arch") {
    CliFixture fixture;
    std::string output;
    const std::string base = "db --db " + quoted(fixture.user_db) + " --system-db " + quoted(fixture.system_db);
    REQUIRE(run_command("env MQAJIT_ARCH=gfx950 " + quoted(cli_path()) + " " + base +
                            " lookup --cu-num 256 --heads 32 --head-dim 128 --seq-len 100 --seq-len-kv 5000 --json",
                        &output) == 0);
    const auto json = nlohmann::json::parse(output);
    CHECK(json["kernel"] == "mfma32x32x64_bkv64_r1_w2_lds2");
    CHECK(json["shape"]["arch"] == "gfx950");
    CHECK(json["row"]["seq_len"] == 256);
    CHECK(json["row"]["seq_len_kv"] == 4096);
    CHECK(json["row"]["backend"] == "jit");
    CHECK(json["row"]["baseline_us"].is_null());
    // The fixture's CSV has no clean_logits column: its rows are clean_logits=1 rows, and a lookup in the
    // default mode 0 is served by them, saying so.
    CHECK(json["shape"]["clean_logits"] == 0);
    CHECK(json["row"]["clean_logits"] == 1);
    REQUIRE(json["fallbacks"].size() == 1);
    CHECK(contains(json["fallbacks"][0].get<std::string>(), "no rows tuned with clean_logits=0: the clean_logits=1 rows serve"));
    CHECK(json["steps"].size() == 6);
    REQUIRE(run_command("env MQAJIT_ARCH=gfx950 " + quoted(cli_path()) + " " + base +
                            " lookup --cu-num 256 --heads 32 --head-dim 128 --seq-len 100 --seq-len-kv 5000 "
                            "--clean-logits 1 --json",
                        &output) == 0);
    const auto own_mode = nlohmann::json::parse(output);
    CHECK(own_mode["kernel"] == "mfma32x32x64_bkv64_r1_w2_lds2");
    CHECK(own_mode["fallbacks"].empty());
    CHECK(own_mode["steps"].size() == 4);
}

TEST_CASE("tuning cli: lookup at an untuned SM count uses the nearest tuned one, unless MQAJIT_NEAREST_CU_NUM=0") {
    CliFixture fixture;
    const std::string lookup = "lookup --arch gfx950 --cu-num 200 --heads 32 --head-dim 128 --seq-len 256 "
                               "--seq-len-kv 4096 --clean-logits 1";
    std::string output;
    REQUIRE(fixture.db(lookup + " --json", &output) == 0);
    const auto json = nlohmann::json::parse(output);
    CHECK(json["kernel"] == "mfma32x32x64_bkv64_r1_w2_lds2");
    CHECK(json["row"]["cu_num"] == 256);
    REQUIRE(json["fallbacks"].size() == 1);
    CHECK(contains(json["fallbacks"][0].get<std::string>(), "not tuned at cu_num 200: the nearest tuned cu_num, 256"));
    const std::string databases = " db --db " + quoted(fixture.user_db) + " --system-db " + quoted(fixture.system_db);
    REQUIRE(run_command("env MQAJIT_NEAREST_CU_NUM=0 " + quoted(cli_path()) + databases + " " + lookup, &output) == 0);
    CHECK(contains(output, "gfx950 heads=32 head_dim=128 is tuned only at cu_num 256, not 200"));
    CHECK(output.ends_with("baseline\n"));
    CHECK(run_command("env MQAJIT_NEAREST_CU_NUM=sometimes " + quoted(cli_path()) + databases + " " + lookup,
                      &output) == 2);
    CHECK(contains(output, "MQAJIT_NEAREST_CU_NUM"));
}

TEST_CASE("tuning cli: lookup takes the logits dtype, and float32 rows serve a bfloat16 call when it has none") {
    CliFixture fixture;
    const std::string lookup = "lookup --arch gfx950 --cu-num 256 --heads 32 --head-dim 128 --seq-len 256 "
                               "--seq-len-kv 4096 --clean-logits 1";
    std::string output;
    REQUIRE(fixture.db(lookup + " --logits-dtype bfloat16 --json", &output) == 0);
    const auto json = nlohmann::json::parse(output);
    CHECK(json["shape"]["logits_dtype"] == "bfloat16");
    CHECK(json["row"]["logits_dtype"] == "float32");
    CHECK(json["kernel"] == "mfma32x32x64_bkv64_r1_w2_lds2");
    REQUIRE(json["fallbacks"].size() == 1);
    CHECK(contains(json["fallbacks"][0].get<std::string>(), "no rows tuned with logits_dtype=bfloat16"));
    REQUIRE(fixture.db(lookup + " --json", &output) == 0);
    CHECK(nlohmann::json::parse(output)["shape"]["logits_dtype"] == "float32");
    CHECK(nlohmann::json::parse(output)["fallbacks"].empty());
    CHECK(fixture.db(lookup + " --logits-dtype float16", &output) == 2);
    CHECK(contains(output, "--logits-dtype"));
    CHECK(fixture.db("lookup --op paged_mqa_logits --arch sm_90a --cu-num 132 --heads 64 --head-dim 128 --next-n 1 "
                     "--block-kv 64 --batch 8 --logits-dtype bfloat16", &output) == 2);
    CHECK(contains(output, "--logits-dtype is not a key of the paged_mqa_logits table"));
}

TEST_CASE("tuning cli: bad usage exits 2") {
    CliFixture fixture;
    std::string output;
    CHECK(fixture.db("lookup --arch gfx950 --cu-num 256 --head-dim 128 --seq-len 1 --seq-len-kv 1", &output) == 2);
    CHECK(contains(output, "--heads"));
    CHECK(fixture.db("lookup --cu-num 256 --heads 32 --head-dim 128 --seq-len 1 --seq-len-kv 1", &output) == 2);
    CHECK(contains(output, "MQAJIT_ARCH"));
    CHECK(fixture.db("lookup --arch gfx950 --cu-num 0 --heads 32 --head-dim 128 --seq-len 1 --seq-len-kv 1",
                     &output) == 2);
    CHECK(fixture.db("lookup --arch tpu_v5 --cu-num 1 --heads 32 --head-dim 128 --seq-len 1 --seq-len-kv 1",
                     &output) == 2);
    CHECK(contains(output, "tpu_v5"));
    CHECK(fixture.db("frobnicate", &output) == 2);
    CHECK(fixture.db("import " + quoted(fixture.dir.path() / "absent.csv"), &output) == 2);
    CHECK(CliFixture::run("db --help", &output) == 0);
    for (const char* command : {"lookup", "list", "import", "export", "check", "build-system"}) {
        CHECK(CliFixture::run(std::string("db ") + command + " --help", &output) == 0);
        CHECK(contains(output, command));
    }
}

TEST_CASE("tuning cli: import skips malformed rows with file:line, list shows user over system") {
    CliFixture fixture;
    const auto import_csv = fixture.dir.path() / "mine.csv";
    write_text(import_csv, std::string(kCsvHeader) +
                               "gfx950,256,32,128,2048,8192,jit,mfma32x32x64_bkv64_r1_w4_lds3,90\n"
                               "gfx950,256,32,128,4096,8192,jit,not-a-variant,90\n"
                               "sm_90a,132,64,128,1024,4096,jit,wgmma64x128x32_bkv128_r2_w2_lds4,40\n"
                               "gfx950,256,32,128,8192,8192,jit,wgmma64x128x32_bkv128_r2_w2_lds4,90\n"
                               "sm_90a,132,64,128,2048,4096,jit,wgmma64x128x32_bkv128_r4_w2_lds4,40\n");
    std::string output;
    CHECK(fixture.db("import " + quoted(import_csv), &output) == 1);  // rows were skipped
    CHECK(contains(output, import_csv.string() + ":3: variant 'not-a-variant' does not parse"));
    // Rows whose variant cannot run where they say are refused with the registry's reason.
    CHECK(contains(output, import_csv.string() + ":5: variant wgmma64x128x32_bkv128_r2_w2_lds4 cannot run on gfx950"));
    CHECK(contains(output, import_csv.string() + ":6: variant wgmma64x128x32_bkv128_r4_w2_lds4 cannot run on sm_90a "
                           "at heads=64 head_dim=128: N=128 must equal r x heads"));
    CHECK(contains(output, "imported 2 row(s)"));
    CHECK(contains(output, "skipped 3 row(s)"));
    CHECK(std::filesystem::exists(fixture.user_db));

    REQUIRE(fixture.db("list --json", &output) == 0);
    const auto rows = nlohmann::json::parse(output);
    REQUIRE(rows.size() == 4);  // 3 system + 2 user - 1 replaced
    int user_rows = 0;
    for (const auto& row : rows) {
        if (row["seq_len"] == 2048 && row["seq_len_kv"] == 8192) {
            CHECK(row["variant"] == "mfma32x32x64_bkv64_r1_w4_lds3");
            CHECK(row["origin"] == "user:" + fixture.user_db.string());
        }
        user_rows += std::string(row["origin"]).starts_with("user:");
    }
    CHECK(user_rows == 2);
    CHECK(fixture.db("list --arch sm_90a", &output) == 0);
    CHECK(contains(output, "wgmma64x128x32_bkv128_r2_w2_lds4"));
    CHECK_FALSE(contains(output, "mfma"));
    CHECK(contains(output, "1 row(s)"));
}

TEST_CASE("tuning cli: export then import into a fresh database reproduces the rows") {
    CliFixture fixture;
    const auto exported = fixture.dir.path() / "exported.csv";
    std::string output;
    REQUIRE(fixture.db("export " + quoted(exported), &output) == 0);
    CHECK(contains(output, "wrote 3 row(s)"));
    const auto second_db = fixture.dir.path() / "second.db";
    REQUIRE(CliFixture::run("db --db " + quoted(second_db) + " import " + quoted(exported), &output) == 0);
    sqlite::Database database(second_db, sqlite::OpenMode::read_only);
    const auto rows = tuning::select_all(database);
    REQUIRE(rows.size() == 3);
    CHECK(rows[2].variant == "mfma32x32x64_bkv64_r2_w4_lds3");
    CHECK(rows[2].us == 98.9);
    REQUIRE(CliFixture::run("db --db " + quoted(second_db) + " --system-db " + quoted(fixture.system_db) +
                                " export --user-only -",
                            &output) == 0);
    CHECK(output.starts_with("gfx,cu_num,heads,head_dim,clean_logits,logits_dtype,seq_len,seq_len_kv,backend,variant,us"));
}

TEST_CASE("tuning cli: check reports collisions with both places and exits 1") {
    CliFixture fixture;
    const auto other = fixture.dir.path() / "configs" / "other_tuned_mqa_logits.csv";
    write_text(other, std::string(kCsvHeader) + "gfx950,256,32,128,2048,8192,jit,mfma32x32x64_bkv64_r1_w4_lds3,90\n");
    std::string output;
    CHECK(fixture.db("check " + quoted(fixture.csv) + " " + quoted(other), &output) == 1);
    CHECK(contains(output, fixture.csv.string() + ":4"));
    CHECK(contains(output, other.string() + ":2"));
    CHECK(contains(output, "FAILED"));
    CHECK(fixture.db("check --json " + quoted(fixture.csv) + " " + quoted(other), &output) == 1);
    const auto json = nlohmann::json::parse(output);
    CHECK(json["ok"] == false);
    CHECK(json["collisions"].size() == 1);
    CHECK(fixture.db("check " + quoted(fixture.csv), &output) == 0);
    CHECK(contains(output, "ok: 3 row(s)"));
}

TEST_CASE("tuning cli: check with no files covers the shipped configs and the user database") {
    CliFixture fixture;
    std::string output;
    CHECK(fixture.db("check", &output) == 0);
    CHECK(contains(output, "glm5_tuned_mqa_logits.csv"));
    // A user row whose variant no longer parses fails the check.
    {
        REQUIRE(fixture.db("import " + quoted(fixture.csv), &output) == 0);
        sqlite::Database database(fixture.user_db, sqlite::OpenMode::read_write);
        database.execute("UPDATE tuned_mqa_logits SET variant = 'mfma_broken' WHERE seq_len = 256");
    }
    CHECK(fixture.db("check", &output) == 1);
    CHECK(contains(output, "mfma_broken"));
    CHECK(contains(output, "user:" + fixture.user_db.string()));
}

TEST_CASE("tuning cli: import into an unusable user database saves nothing and says so") {
    CliFixture fixture;
    write_text(fixture.user_db, std::string(3000, 'z'));
    std::string output;
    CHECK(fixture.db("import " + quoted(fixture.csv), &output) == 1);
    CHECK(contains(output, "nothing was saved"));
    CHECK(read_text(fixture.user_db) == std::string(3000, 'z'));
}

TEST_CASE("tuning cli: the build made the system database from the shipped CSVs") {
    const auto built = std::filesystem::path(MQAJIT_BINARY_DIR) / "share" / "mqajit" / "system_tuning.db";
    REQUIRE_MESSAGE(std::filesystem::exists(built), "build the mqajit_system_db target (plain `ninja` does)");
    sqlite::Database database(built, sqlite::OpenMode::read_only);
    const auto rows = tuning::select_all(database);
    // GLM-5: 24 shapes for gfx950 (256 CUs) and 24 for sm_90a (132 SMs); DeepSeek-V3.2: 21 for sm_90a;
    // the sm_90a shapes with float32 logits in both clean_logits modes, and with bfloat16 in mode 0.
    CHECK(rows.size() == 159);
    int per_arch[2] = {0, 0};
    int bfloat16_rows = 0;
    for (const TunedRow& row : rows) {
        CHECK((row.key.arch == "gfx950" || row.key.arch == "sm_90a"));
        ++per_arch[row.key.arch == "sm_90a" ? 1 : 0];
        CHECK(row.key.cu_num == (row.key.arch == "sm_90a" ? 132 : 256));
        if (row.key.logits_dtype == "bfloat16") {
            ++bfloat16_rows;
            CHECK(row.key.clean_logits == 0);
            // NOTES: with bf16 logits the baseline kernel wins at a few shapes (its general store path).
            CHECK((row.backend == "jit" || row.backend == "baseline"));
        } else {
            CHECK(row.backend == "jit");
        }
        CHECK(row.origin.starts_with("tuning_db/configs/model_configs/"));
    }
    CHECK(per_arch[0] == 24);
    CHECK(per_arch[1] == 135);
    CHECK(bfloat16_rows == 45);
    std::string output;
    CHECK(CliFixture::run("db --db " + quoted(std::filesystem::temp_directory_path() / "mqajit-absent-dir" /
                                              "never.db") +
                              " --system-db " + quoted(built) +
                              " lookup --arch gfx950 --cu-num 256 --heads 32 --head-dim 128 --seq-len 2048 "
                              "--seq-len-kv 60000",
                          &output) == 0);
    CHECK(output.ends_with("mfma32x32x64_bkv128_r2_w4_lds2\n"));
}

TEST_CASE("tuning cli: every command that reads the user database exits 1, saying why, when it cannot read it") {
    struct Damage {
        const char* name;
        void (*apply)(const std::filesystem::path& user_db);
        const char* says;
    };
    const Damage damages[] = {
        {"not a database", [](const std::filesystem::path& db) { write_text(db, std::string(3000, 'z')); },
         "is damaged or not an SQLite database"},
        {"a folder", [](const std::filesystem::path& db) { std::filesystem::create_directories(db); }, "cannot be used"},
        {"a future schema", [](const std::filesystem::path& db) {
             TuningDb(std::nullopt, db).insert(glm5_row(256, 4096, "mfma32x32x64_bkv64_r1_w2_lds2"));
             sqlite::Database(db, sqlite::OpenMode::read_write).execute(
                 "UPDATE meta SET value = '99' WHERE key = 'schema_version'");
         }, "has schema version 99"},
        {"a schema version that is not a number", [](const std::filesystem::path& db) {
             TuningDb(std::nullopt, db).insert(glm5_row(256, 4096, "mfma32x32x64_bkv64_r1_w2_lds2"));
             sqlite::Database(db, sqlite::OpenMode::read_write).execute(
                 "UPDATE meta SET value = '1abc' WHERE key = 'schema_version'");
         }, "records schema_version '1abc', not a number"},
    };
    const char* commands[] = {"list", "list --user-only", "list --json", "export -", "export --user-only -",
                              "lookup --arch gfx950 --cu-num 256 --heads 32 --head-dim 128 --seq-len 256 --seq-len-kv 4096",
                              "check"};
    for (const Damage& damage : damages) {
        CAPTURE(damage.name);
        CliFixture fixture;
        damage.apply(fixture.user_db);
        for (const char* command : commands) {
            CAPTURE(command);
            std::string output;
            CHECK(fixture.db(command, &output) == 1);
            INFO(output);
            CHECK(contains(output, "cannot read the user tuning database " + fixture.user_db.string()));
            CHECK(contains(output, damage.says));
        }
    }
}

TEST_CASE("tuning cli: a system database without its table is refused when opened, with a clear message") {
    CliFixture fixture;
    {
        sqlite::Database database(fixture.system_db, sqlite::OpenMode::read_write);
        database.execute("DROP TABLE tuned_mqa_logits");
    }
    std::string output;
    CHECK(fixture.db("list", &output) == 1);
    INFO(output);
    CHECK(contains(output, fixture.system_db.string()));
    CHECK(contains(output, "has no table tuned_mqa_logits"));
    CHECK_FALSE(contains(output, "no such table"));

    // The library: one warning, and the baseline for untuned shapes.
    LogCapture captured;
    TuningDb database(fixture.system_db, fixture.user_db);
    CHECK(database.system_rows().empty());
    CHECK(database.lookup(glm5_row(256, 4096, "x").key) == nullptr);
    CHECK(captured.count("has no table tuned_mqa_logits") == 1);
}
