// `mqajit aot --variants table` builds the kernels the mqa_topk table's rows name, as it does the
// other tables' (a CUDA build: NVRTC compiles the twgmma kernel for sm_90a without a GPU).

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support.hpp"
#include "tuning_db/tuning_db.hpp"

using namespace mqajit;
using namespace mqajit::testing;

TEST_CASE("aot --variants table: an mqa_topk row's fused kernel is built") {
    const TempDir dir("aot-topk-table");
    const std::filesystem::path user_db = dir.path() / "tuning.db";
    {
        TuningDb database(std::nullopt, user_db);
        TopkTunedRow row;
        row.key = {.arch = "sm_90a", .cu_num = 132, .heads = 32, .head_dim = 128, .k = 2048, .seq_len = 1024,
                   .seq_len_kv = 65536};
        row.backend = "jit";
        row.variant = "twgmma64x128x32_bkv64_r4_w2_lds4";
        row.us = 100;
        database.insert(row);
    }
    const std::string command = "(MQAJIT_CACHE_DIR=" + (dir.path() / "cache").string() + " MQAJIT_TUNING_DB=" +
                                user_db.string() + " MQAJIT_SYSTEM_DB=" + (dir.path() / "none.db").string() + " " +
                                cli_path().string() + " aot --arch sm_90a --variants table --json 2>/dev/null)";
    std::string output;
    const int exit_code = run_command(command, &output);
    INFO(output);
    CHECK(exit_code == 0);
    const nlohmann::json rows = nlohmann::json::parse(output.substr(output.find('[')));
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].at("variant") == "twgmma64x128x32_bkv64_r4_w2_lds4");
    CHECK(rows[0].at("status") == "built");
}
