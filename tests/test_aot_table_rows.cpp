// `mqajit aot --variants table` with a tuned row whose variant no longer parses: the other rows'
// kernels are still built, the bad row is reported by its origin, and the command exits 1.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "mqajit/error.hpp"
#include "runtime/compiler_clang_hip.hpp"
#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tuning_db/sqlite.hpp"
#include "tuning_db/tuning_db.hpp"

using namespace mqajit;
using namespace mqajit::testing;

TEST_CASE("aot --variants table: a row whose variant does not parse is reported, the others are built, exit 1") {
    try {
        ClangHipCompiler clang;
    } catch (const Error& e) {
        MQAJIT_SKIP(e.what());
    }
    const TempDir dir("aot-table");
    const std::filesystem::path user_db = dir.path() / "tuning.db";
    {
        TuningDb database(std::nullopt, user_db);
        const TunedRow rows[] = {glm5_row(256, 4096, "mfma32x32x64_bkv64_r1_w2_lds2"),
                                 glm5_row(1024, 4096, "mfma32x32x64_bkv64_r2_w2_lds3")};
        database.insert(rows);
    }
    {
        sqlite::Database database(user_db, sqlite::OpenMode::read_write);
        database.execute("UPDATE tuned_mqa_logits SET variant = variant || '_v2' WHERE seq_len = 1024");
    }
    // NOTES: in a subshell, so its stderr (warnings) stays out of the JSON that run_command captures.
    const std::string command = "(MQAJIT_CACHE_DIR=" + (dir.path() / "cache").string() + " MQAJIT_TUNING_DB=" +
                                user_db.string() + " MQAJIT_SYSTEM_DB=" + (dir.path() / "none.db").string() + " " +
                                cli_path().string() + " aot --arch gfx950 --variants table --json 2>/dev/null)";
    std::string output;
    const int exit_code = run_command(command, &output);
    INFO(output);
    CHECK(exit_code == 1);
    const nlohmann::json rows = nlohmann::json::parse(output.substr(output.find('[')));
    REQUIRE(rows.size() == 2);
    int built = 0, failed = 0;
    for (const auto& row : rows) {
        CAPTURE(row.dump());
        if (row.at("status") == "built") {
            ++built;
            CHECK(row.at("variant") == "mfma32x32x64_bkv64_r1_w2_lds2");
        } else {
            ++failed;
            CHECK(row.at("status") == "FAILED");
            CHECK(row.at("variant") == "mfma32x32x64_bkv64_r2_w2_lds3_v2");
            const std::string error = row.at("error");
            CHECK(error.find("user:" + user_db.string()) != std::string::npos);
            CHECK(error.find("does not parse") != std::string::npos);
        }
    }
    CHECK(built == 1);
    CHECK(failed == 1);
}
