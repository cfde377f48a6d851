// The clean_logits mode in the tools, without a GPU: --clean-logits lists, which shapes run in
// which mode, shape files that say a mode, the tuner's rows and JSON keyed by it, bench's lines
// and JSON rows (read back by the report, which picks a table's mode), and the commands' usage
// errors before any GPU is looked for.

#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "runtime/backend.hpp"
#include "tests/error_kind.hpp"
#include "tests/support.hpp"
#include "tools/common/bench_output.hpp"
#include "tools/common/report_compare.hpp"
#include "tools/common/report_data.hpp"
#include "tools/common/shapes.hpp"
#include "tools/common/tune_json.hpp"
#include "tools/common/tune_workers_plan.hpp"
#include "tools/common/tuner.hpp"

using namespace mqajit;

namespace {

tools::BenchShape shape(int seq_len, std::optional<int> clean_logits = std::nullopt) {
    return {.seq_len = seq_len, .seq_len_kv = 4096, .clean_logits = clean_logits};
}

std::vector<std::pair<int, int>> seq_lens_and_modes(const std::vector<tools::BenchShape>& shapes) {
    std::vector<std::pair<int, int>> out;
    for (const auto& s : shapes) out.emplace_back(s.seq_len, s.clean_logits.value_or(-1));
    return out;
}

int cli(const std::string& arguments, std::string* output) {
    return testing::run_command(testing::cli_path().string() + " " + arguments, output);
}

bool contains(const std::string& text, std::string_view needle) { return text.find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("modes: --clean-logits takes 0, 1 or both, in the order given") {
    CHECK(tools::parse_clean_logits_modes("--clean-logits", "0") == std::vector<int>{0});
    CHECK(tools::parse_clean_logits_modes("--clean-logits", "1") == std::vector<int>{1});
    CHECK(tools::parse_clean_logits_modes("--clean-logits", "0,1") == std::vector<int>{0, 1});
    CHECK(tools::parse_clean_logits_modes("--clean-logits", "1,0") == std::vector<int>{1, 0});
    for (const char* bad : {"", "2", "0,", ",1", "0,0", "true", "both", "0,1,0", " 1"}) {
        CAPTURE(bad);
        CHECK(testing::error_kind_of([&] { tools::parse_clean_logits_modes("--clean-logits", bad); }) ==
              ErrorKind::invalid_argument);
    }
    try {
        tools::parse_clean_logits_modes("--clean-logits", "0,0");
    } catch (const Error& e) {
        CHECK(contains(e.what(), "--clean-logits '0,0' names 0 twice"));
    }
}

TEST_CASE("modes: shapes that say no mode run in each mode given, shapes that say one keep it") {
    const std::vector<tools::BenchShape> shapes = {shape(256), shape(1024, 1), shape(2048, 0), shape(4096)};
    using Pairs = std::vector<std::pair<int, int>>;
    // No --clean-logits: the unsaid ones in the callers' mode 0, the others in theirs.
    CHECK(seq_lens_and_modes(tools::in_modes(shapes, std::nullopt)) == Pairs{{256, 0}, {1024, 1}, {2048, 0}, {4096, 0}});
    // --clean-logits 1,0: each unsaid shape twice, next to each other; the said ones only if listed.
    CHECK(seq_lens_and_modes(tools::in_modes(shapes, std::vector<int>{1, 0})) ==
          Pairs{{256, 1}, {256, 0}, {1024, 1}, {2048, 0}, {4096, 1}, {4096, 0}});
    CHECK(seq_lens_and_modes(tools::in_modes(shapes, std::vector<int>{1})) == Pairs{{256, 1}, {1024, 1}, {4096, 1}});
    CHECK(tools::clean_logits_of(shape(1)) == false);  // unsaid: the callers' mode
    CHECK(tools::clean_logits_of(shape(1, 1)));
    CHECK(tools::shape_label(shape(256, 1)) == "H=32 D=128 S=256 N=4096 clean_logits=1");
    CHECK(tools::shape_label(shape(256)) == "H=32 D=128 S=256 N=4096");
}

TEST_CASE("modes: shape files say a row's mode, an empty field says none, a worker's file keeps them") {
    testing::TempDir dir("modes-shapes");
    const auto file = dir.path() / "shapes.csv";
    std::ofstream(file) << "seq_len,seq_len_kv,clean_logits\n256,4096,1\n1024,4096,\n2048,4096,0\n";
    const auto shapes = tools::read_shapes_csv(file);
    REQUIRE(shapes.size() == 3);
    CHECK(shapes[0].clean_logits == 1);
    CHECK_FALSE(shapes[1].clean_logits);
    CHECK(shapes[2].clean_logits == 0);

    tools::write_shapes_csv(dir.path() / "part.csv", shapes);
    const auto back = tools::read_shapes_csv(dir.path() / "part.csv");
    REQUIRE(back.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) CHECK(back[i].clean_logits == shapes[i].clean_logits);

    std::ofstream(file) << "seq_len,seq_len_kv,clean_logits\n256,4096,2\n";
    try {
        tools::read_shapes_csv(file);
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::invalid_argument);
        CHECK(contains(e.what(), file.string() + ":2: clean_logits is '2'; it must be 0 or 1"));
    }
}

TEST_CASE("modes: a tuned row belongs to the shape of its mode, in the CSV merge and in the tuner's JSON") {
    auto row = [](int clean_logits, double us) {
        return TunedRow{.key = {.arch = "sm_90a", .cu_num = 132, .heads = 32, .head_dim = 128,
                                .clean_logits = clean_logits, .seq_len = 256, .seq_len_kv = 4096},
                        .backend = "jit", .variant = "wgmma64x128x32_bkv64_r4_w4_lds4", .us = us};
    };
    const std::vector<TunedRow> rows = {row(0, 10), row(1, 11)};
    CHECK(tools::tunes_shape(rows[0].key, shape(256, 0)));
    CHECK_FALSE(tools::tunes_shape(rows[0].key, shape(256, 1)));
    CHECK(tools::tunes_shape(rows[0].key, shape(256)));  // a shape that says no mode takes either
    const auto picked = tools::rows_for_shapes(rows, {shape(256, 1), shape(256, 0)});
    REQUIRE(picked.size() == 2);
    CHECK(picked[0].us == 11);
    CHECK(picked[1].us == 10);

    tools::ShapeResult result{.complete = true, .row = row(0, 10), .flops = 4e8};
    result.candidates = {{.kernel = "baseline", .verified = true, .median_us = 40, .runs = 50},
                         {.kernel = result.row.variant, .verified = true, .median_us = 10, .runs = 50}};
    result.row.baseline_us = 40;
    const nlohmann::json callers = tools::tune_json_row(result, {});
    CHECK(callers["clean_logits"] == 0);
    result.row.key.clean_logits = 1;
    const nlohmann::json clean = tools::tune_json_row(result, {});
    // The two modes of a shape are two rows; a row written before the mode was recorded is a mode-1 row.
    nlohmann::json legacy = clean;
    legacy.erase("clean_logits");
    legacy["us"] = 99;
    const nlohmann::json merged = tools::merge_tune_json(nlohmann::json::array({callers, legacy}),
                                                         nlohmann::json::array({clean}));
    REQUIRE(merged.size() == 2);
    CHECK(merged[0]["clean_logits"] == 0);
    CHECK(merged[1]["us"] == 10.0);
    CHECK(tools::tune_json_for_shapes(merged, {shape(256, 1)}).front()["clean_logits"] == 1);
}

TEST_CASE("modes: bench times a shape's modes together and writes one line and one row per mode") {
    const std::vector<tools::BenchShape> shapes = tools::in_modes({shape(256), shape(1024)}, std::vector<int>{0, 1});
    const auto groups = tools::group_modes_of_a_shape(shapes);
    REQUIRE(groups.size() == 2);
    CHECK(seq_lens_and_modes(groups[0]) == std::vector<std::pair<int, int>>{{256, 0}, {256, 1}});
    CHECK(seq_lens_and_modes(groups[1]) == std::vector<std::pair<int, int>>{{1024, 0}, {1024, 1}});
    CHECK(tools::group_modes_of_a_shape(tools::in_modes({shape(256), shape(256)}, std::nullopt)).size() == 1);

    tools::BenchResult r{.shape = groups[0][1], .arch = "sm_90a", .cu_num = 132, .kernel = "wgmma64x128x32_bkv64_r4_w4_lds4",
                         .reason = "tuned row x.csv:2", .chosen = {.median_us = 20, .min_us = 19, .runs = 50},
                         .baseline = {.median_us = 40, .runs = 50}, .flops = 4e9};
    const std::string line = tools::bench_table_line(r);
    CHECK(tools::bench_table_header().find("clean") != std::string::npos);
    CHECK(line.starts_with(" 32    256   4096     1  wgmma64x128x32_bkv64_r4_w4_lds4 "));
    CHECK(line.find("2.00x") != std::string::npos);
    const nlohmann::json row = tools::bench_json_row(r);
    CHECK(row["clean_logits"] == 1);
    CHECK(row["us"] == 20.0);
    CHECK(row["baseline_us"] == 40.0);
    CHECK(row["tflops"].get<double>() == doctest::Approx(200.0));

    // The report reads the mode back and compares a table with the bench rows of its own mode only.
    testing::TempDir dir("modes-bench");
    const auto json = dir.path() / "bench.json";
    nlohmann::json rows = nlohmann::json::array();
    for (int mode : {0, 1}) {
        tools::BenchResult m = r;
        m.shape.clean_logits = mode;
        m.variants_us = {{r.kernel, mode ? 20.0 : 10.0}};
        m.chosen.median_us = mode ? 20.0 : 10.0;
        rows.push_back(tools::bench_json_row(m));
    }
    std::ofstream(json) << rows.dump();
    const auto bench = tools::read_bench_json(json);
    REQUIRE(bench.size() == 2);
    CHECK(bench[0].clean_logits == 0);
    CHECK(bench[1].clean_logits == 1);
    const auto csv = dir.path() / "tuned.csv";
    std::ofstream(csv) << "gfx,cu_num,heads,head_dim,clean_logits,seq_len,seq_len_kv,backend,variant,us\n"
                          "sm_90a,132,32,128,0,256,4096,jit,wgmma64x128x32_bkv64_r4_w4_lds4,10\n"
                          "sm_90a,132,32,128,1,256,4096,jit,wgmma64x128x32_bkv64_r4_w4_lds4,20\n";
    CHECK(testing::error_kind_of([&] { tools::load_tuned_table(csv, {}); }) == ErrorKind::invalid_argument);
    for (int mode : {0, 1}) {
        const tools::TunedTable table = tools::load_tuned_table(csv, {.clean_logits = mode});
        CHECK(table.group.clean_logits == mode);
        REQUIRE(table.rows.size() == 1);
        const tools::TuningComparison c = tools::compare_tuning(table, bench);
        REQUIRE(c.shapes.size() == 1);
        CHECK(c.shapes[0].tuned_us == (mode ? 20.0 : 10.0));
    }
    // A bench file from before the mode was recorded ran with clean_logits=1.
    rows[1].erase("clean_logits");
    std::ofstream(json) << nlohmann::json::array({rows[1]}).dump();
    CHECK(tools::read_bench_json(json)[0].clean_logits == 1);
}

TEST_CASE("modes cli: --clean-logits is checked before any GPU is looked for") {
    std::string output;
    CHECK(cli("tune -i a.csv -o b.csv --clean-logits 2", &output) == 2);
    CHECK(contains(output, "--clean-logits '2': give 0, 1 or 0,1"));
    CHECK(cli("tune --run-config c.csv --clean-logits 0,0", &output) == 2);
    CHECK(cli("bench --clean-logits both", &output) == 2);
    CHECK(contains(output, "--clean-logits 'both'"));
    CHECK(cli("demo --clean-logits 2", &output) == 2);
    CHECK(cli("db lookup --arch sm_90a --cu-num 132 --heads 32 --head-dim 128 --seq-len 1 --seq-len-kv 1 "
              "--clean-logits 3", &output) == 2);
    testing::TempDir dir("modes-cli");
    const auto shapes = dir.path() / "shapes.csv";
    std::ofstream(shapes) << "seq_len,seq_len_kv,clean_logits\n256,4096,7\n";
    CHECK(cli("bench --shapes " + shapes.string(), &output) == 2);
    CHECK(contains(output, shapes.string() + ":2: clean_logits is '7'"));
    for (const char* help : {"tune --help", "bench --help", "demo --help", "db lookup --help", "report --help"}) {
        CHECK(cli(help, &output) == 0);
        CHECK(contains(output, "--clean-logits"));
    }
    if (live_driver_status().available) {
        MESSAGE("a GPU is present: the no-GPU refusals are not exercised here");
        return;
    }
    CHECK(cli("bench --clean-logits 0,1 --shapes deepseek", &output) == 1);
    CHECK(contains(output, "bench needs a GPU"));
    const std::string untuned =
        std::string(MQAJIT_SOURCE_DIR) + "/tuning_db/configs/model_configs/glm5_untuned_mqa_logits.csv";
    CHECK(cli("tune -i " + untuned + " -o " + (dir.path() / "out.csv").string() + " --clean-logits 1", &output) == 1);
    CHECK(contains(output, "tuning needs a GPU"));
}

TEST_CASE("modes cli: demo without a GPU explains the lookup in the mode asked for") {
    if (live_driver_status().available) MQAJIT_SKIP("a GPU is present: the no-GPU explanation is not exercised here");
    std::string output;
    REQUIRE(cli("demo --arch sm_90a --cu-num 132 --clean-logits 1", &output) == 0);
    CHECK(contains(output, "clean_logits=1; lookup for sm_90a with 132 SMs/CUs"));
    CHECK(contains(output, "group arch=sm_90a cu_num=132 heads=32 head_dim=128 clean_logits=1"));
    REQUIRE(cli("demo --arch sm_90a --cu-num 114", &output) == 0);
    CHECK(contains(output, "clean_logits=0; lookup"));
    CHECK(contains(output, "the nearest tuned cu_num, 132, serves"));
    REQUIRE(testing::run_command("env MQAJIT_NEAREST_CU_NUM=0 " + testing::cli_path().string() +
                                     " demo --arch sm_90a --cu-num 114",
                                 &output) == 0);
    CHECK(contains(output, "MQAJIT_NEAREST_CU_NUM is off"));
    CHECK(contains(output, "would serve: the baseline kernel"));
}
