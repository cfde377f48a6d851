// Tuning-table CSVs: parsing, quoting, malformed rows (reported with file:line and skipped),
// imported backend names, and writing back.

#include <doctest/doctest.h>

#include <sstream>

#include "mqajit/error.hpp"
#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tuning_db/config_files.hpp"
#include "tuning_db/csv.hpp"

using namespace mqajit;
using namespace mqajit::testing;
using mqajit::tuning::parse_csv;

TEST_CASE("tuning csv: columns are found by header name, extra columns ignored") {
    const auto parsed = parse_csv(
        "variant,us,gfx,seq_len_kv,seq_len,head_dim,heads,cu_num,backend,tflops\n"
        "mfma32x32x64_bkv64_r2_w4_lds3,98.9,gfx950,8192,2048,128,32,256,jit,12.5\n",
        "t.csv");
    REQUIRE(parsed.problems.empty());
    REQUIRE(parsed.rows.size() == 1);
    const TunedRow& row = parsed.rows[0];
    CHECK(row.key == gfx950_key(32, 128, 1, 2048, 8192));
    CHECK(row.backend == "jit");
    CHECK(row.variant == "mfma32x32x64_bkv64_r2_w4_lds3");
    CHECK(row.us == doctest::Approx(98.9));
    CHECK_FALSE(row.baseline_us.has_value());
    CHECK(row.origin == "t.csv:2");
}

TEST_CASE("tuning csv: optional measurement and provenance columns are read") {
    const auto parsed = parse_csv(
        "gfx,cu_num,heads,head_dim,seq_len,seq_len_kv,backend,variant,us,baseline_us,runner_up,tuner_version,"
        "compiler_version,driver_version,date\n"
        "sm_90a,132,64,128,1024,4096,jit,wgmma64x128x32_bkv128_r4_w2_lds3,41.5,55.25,"
        "wgmma64x64x32_bkv64_r4_w2_lds2,0.1.0,nvrtc 12.8,570.86,2025-01-31\n"
        "sm_90a,132,64,128,2048,4096,jit,wgmma64x128x32_bkv128_r4_w2_lds3,80,,,,,,\n",
        "p.csv");
    REQUIRE(parsed.problems.empty());
    REQUIRE(parsed.rows.size() == 2);
    CHECK(parsed.rows[0].baseline_us == doctest::Approx(55.25));
    CHECK(parsed.rows[0].runner_up == "wgmma64x64x32_bkv64_r4_w2_lds2");
    CHECK(parsed.rows[0].tuner_version == "0.1.0");
    CHECK(parsed.rows[0].compiler_version == "nvrtc 12.8");
    CHECK(parsed.rows[0].driver_version == "570.86");
    CHECK(parsed.rows[0].date == "2025-01-31");
    CHECK_FALSE(parsed.rows[1].baseline_us.has_value());
    CHECK(parsed.rows[1].runner_up.empty());
}

TEST_CASE("tuning csv: flydsl reads as jit and triton as baseline") {
    const auto parsed = parse_csv(std::string(kCsvHeader) +
                                      "gfx950,256,32,128,256,4096,flydsl,mfma32x32x64_bkv64_r1_w2_lds2,18.4\n"
                                      "gfx950,256,32,128,512,4096,triton,BLOCK_KV=64,30.0\n",
                                  "i.csv");
    REQUIRE(parsed.problems.empty());
    REQUIRE(parsed.rows.size() == 2);
    CHECK(parsed.rows[0].backend == "jit");
    CHECK(parsed.rows[1].backend == "baseline");
    CHECK(parsed.rows[1].variant == "baseline");
}

TEST_CASE("tuning csv: each kind of malformed row is reported with file:line and skipped") {
    const std::string text = std::string(kCsvHeader) +
                             "gfx950,256,32,128,256,4096,jit,mfma32x32x64_bkv64_r1_w2_lds2,18.4\n"     // 2 ok
                             "gfx950,256,32,128,512,4096,jit,mfma32x32x64_bkv64_r1_w2_lds2\n"          // 3 count
                             "gfx950,256,32,12x,512,4096,jit,mfma32x32x64_bkv64_r1_w2_lds2,1\n"        // 4 number
                             "gfx950,256,32,128,512,4096,cuda,mfma32x32x64_bkv64_r1_w2_lds2,1\n"       // 5 backend
                             "gfx950,256,32,128,512,4096,jit,mfma32x32_bkv64,1\n"                      // 6 variant
                             "gfx950,256,32,128,0,4096,jit,mfma32x32x64_bkv64_r1_w2_lds2,1\n"          // 7 size
                             "\n"                                                                      // 8 blank
                             "gfx950,256,32,128,1024,4096,jit,\"mfma32x32x64_bkv64_r1_w2_lds2\",20\n"  // 9 ok
                             "gfx950,256,-32,128,512,4096,jit,mfma32x32x64_bkv64_r1_w2_lds2,1\n"       // 10 size
                             "gfx950,256,32,128,2048,4096,jit,mfma32x32x64_bkv64_r1_w2_lds2,0\n"       // 11 us
                             "gfx950,256,32,128,2048,4096,jit,\"mfma32x32x64_bkv64_r1_w2_lds2,1\n";    // 12 quote
    const auto parsed = parse_csv(text, "dir/m.csv");
    REQUIRE(parsed.rows.size() == 2);
    CHECK(parsed.rows[0].origin == "dir/m.csv:2");
    CHECK(parsed.rows[1].origin == "dir/m.csv:9");
    std::vector<std::string> places;
    for (const auto& problem : parsed.problems) places.push_back(problem.place);
    CHECK(places == std::vector<std::string>{"dir/m.csv:3", "dir/m.csv:4", "dir/m.csv:5", "dir/m.csv:6",
                                             "dir/m.csv:7", "dir/m.csv:10", "dir/m.csv:11", "dir/m.csv:12"});
    REQUIRE(parsed.problems.size() == 8);
    CHECK(parsed.problems[0].message.find("8 fields but the header has 9") != std::string::npos);
    CHECK(parsed.problems[1].message.find("head_dim '12x' is not a whole number") != std::string::npos);
    CHECK(parsed.problems[2].message.find("backend 'cuda'") != std::string::npos);
    CHECK(parsed.problems[3].message.find("variant 'mfma32x32_bkv64'") != std::string::npos);
    CHECK(parsed.problems[4].message.find("seq_len is 0") != std::string::npos);
    CHECK(parsed.problems[5].message.find("heads is -32") != std::string::npos);
    CHECK(parsed.problems[6].message.find("us is 0") != std::string::npos);
    CHECK(parsed.problems[7].message.find("never closed") != std::string::npos);
}

TEST_CASE("tuning csv: a header without a required column loads nothing and says which") {
    const auto parsed = parse_csv("gfx,cu_num,heads,head_dim,seq_len,backend,variant,us\n"
                                  "gfx950,256,32,128,256,jit,mfma32x32x64_bkv64_r1_w2_lds2,18.4\n",
                                  "h.csv");
    CHECK(parsed.rows.empty());
    REQUIRE(parsed.problems.size() == 1);
    CHECK(parsed.problems[0].place == "h.csv:1");
    CHECK(parsed.problems[0].message.find("seq_len_kv") != std::string::npos);
}

TEST_CASE("tuning csv: quoted fields keep commas and doubled quotes, CRLF lines are fine") {
    CHECK(tuning::split_csv_line(R"(a, "b,c" ,"say ""hi""",,d )") ==
          std::vector<std::string>{"a", "b,c", R"(say "hi")", "", "d"});
    CHECK(tuning::split_csv_line("") == std::vector<std::string>{""});
    CHECK_THROWS_AS(tuning::split_csv_line(R"("a"b,c)"), Error);
    const auto parsed =
        parse_csv("gfx,cu_num,heads,head_dim,seq_len,seq_len_kv,backend,variant,us,runner_up\r\n"
                  "gfx950,256,32,128,256,4096,jit,mfma32x32x64_bkv64_r1_w2_lds2,18.4,\"a, \"\"b\"\"\"\r\n",
                  "q.csv");
    REQUIRE(parsed.problems.empty());
    REQUIRE(parsed.rows.size() == 1);
    CHECK(parsed.rows[0].runner_up == R"(a, "b")");
    CHECK(parsed.rows[0].us == doctest::Approx(18.4));
}

TEST_CASE("tuning csv: written rows parse back to the same rows") {
    TunedRow full = make_row("sm_90a", 132, 64, 128, 4096, 65536, "wgmma64x128x32_bkv128_r4_w2_lds3", 123.456789);
    full.baseline_us = 150.0625;
    full.runner_up = "tricky, \"quoted\" name";
    full.tuner_version = "0.1.0";
    full.compiler_version = "nvrtc 12.8";
    full.driver_version = "570.86";
    full.date = "2025-02-01";
    const std::vector<TunedRow> rows = {full, glm5_row(256, 4096, "mfma32x32x64_bkv64_r1_w2_lds2", 0.1 + 0.2),
                                        make_row("gfx950", 256, 64, 128, 1, 1, "baseline", 1e-3)};
    std::ostringstream out;
    tuning::write_csv(out, rows);
    CHECK(out.str().starts_with("gfx,cu_num,heads,head_dim,clean_logits,logits_dtype,seq_len,seq_len_kv,backend,variant,us,baseline_us,"));
    const auto parsed = parse_csv(out.str(), "w.csv");
    REQUIRE(parsed.problems.empty());
    REQUIRE(parsed.rows.size() == rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        TunedRow expected = rows[i];
        expected.origin = "w.csv:" + std::to_string(i + 2);
        CHECK(tuning::csv_line(parsed.rows[i]) == tuning::csv_line(expected));
        CHECK(parsed.rows[i].us == expected.us);  // shortest round-trip formatting: exact
        CHECK(parsed.rows[i].origin == expected.origin);
    }
}

TEST_CASE("tuning csv: a missing file is an io error naming it") {
    TempDir dir("csv-missing");
    try {
        (void)tuning::read_csv_file(dir.path() / "absent.csv");
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::io);
        CHECK(std::string(e.what()).find("absent.csv") != std::string::npos);
    }
}

TEST_CASE("tuning csv: the shipped GLM-5 table loads whole and clean") {
    const auto files = tuning::shipped_config_files(shipped_configs_dir());
    REQUIRE(files.size() >= 2);
    const auto names_glm5 = [](const std::filesystem::path& f) { return f.filename() == "glm5_tuned_mqa_logits.csv"; };
    CHECK(std::ranges::count_if(files, names_glm5) == 1);
    CHECK(files.back().filename() == "tuned_mqa_logits.csv");  // sorted: model_configs/ first
    const auto loaded = tuning::load_config_files(files);
    CHECK(loaded.problems.empty());
    CHECK(loaded.collisions.empty());
    const auto glm5 = std::ranges::count_if(loaded.rows, [](const TunedRow& row) {
        return row.key.arch == "gfx950" && row.key.cu_num == 256 && row.key.heads == 32 && row.key.head_dim == 128;
    });
    CHECK(glm5 == 24);
    const auto h200_glm5 = std::ranges::count_if(loaded.rows, [](const TunedRow& row) {
        return row.key.arch == "sm_90a" && row.key.cu_num == 132 && row.key.heads == 32 && row.key.head_dim == 128;
    });
    CHECK(h200_glm5 == 72);  // float32 in both clean_logits modes, bfloat16 in mode 0
    const auto general = tuning::read_csv_file(shipped_configs_dir() / "tuned_mqa_logits.csv");
    CHECK(general.rows.empty());
    CHECK(general.problems.empty());
}

TEST_CASE("tuning csv: arch names are stored canonically, an unknown arch is a malformed row") {
    const auto parsed = parse_csv(std::string(kCsvHeader) +
                                      "sm90a,132,64,128,1024,4096,jit,wgmma64x128x32_bkv128_r4_w2_lds3,40\n"
                                      "gfx942:sramecc+:xnack-,304,32,128,256,4096,jit,mfma32x32x64_bkv64_r1_w2_lds2,1\n"
                                      "tpu_v5,1,32,128,256,4096,jit,mfma32x32x64_bkv64_r1_w2_lds2,1\n",
                                  "a.csv");
    REQUIRE(parsed.rows.size() == 2);
    CHECK(parsed.rows[0].key.arch == "sm_90a");
    CHECK(parsed.rows[1].key.arch == "gfx942");
    REQUIRE(parsed.problems.size() == 1);
    CHECK(parsed.problems[0].place == "a.csv:4");
    CHECK(parsed.problems[0].message.find("tpu_v5") != std::string::npos);
    // Rows handed to the API must already use the canonical spelling the runtime looks up.
    CHECK(row_problem(make_row("sm90a", 132, 64, 128, 1, 1, "wgmma64x128x32_bkv128_r4_w2_lds3", 1)).value_or("")
              .find("must be written 'sm_90a'") != std::string::npos);
    CHECK_FALSE(row_problem(make_row("sm_90a", 132, 64, 128, 1, 1, "wgmma64x128x32_bkv128_r4_w2_lds3", 1)));
}
