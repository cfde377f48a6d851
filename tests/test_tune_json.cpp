// The tuner's parts that need no GPU: the pruning decision, its JSON rows read back by
// `mqajit report` (tuned vs baseline vs best fixed, with pruned candidates' probe times), and the
// merge of `--devices` workers' JSON parts into the output file.

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <string>

#include "tests/error_kind.hpp"
#include "tests/support.hpp"
#include "tools/common/report_compare.hpp"
#include "tools/common/report_markdown.hpp"
#include "tools/common/tune_json.hpp"
#include "tools/common/tuner.hpp"
#include "tuning_db/csv.hpp"

using namespace mqajit;

namespace {

constexpr const char* kFast = "wgmma64x128x32_bkv64_r4_w4_lds4";
constexpr const char* kSlow = "mma16x8x32_bkv64_r2_w4_lds2";
constexpr const char* kBad = "wgmma64x64x32_bkv128_r2_w2_lds4";

// A finished shape with the baseline at 40 us, `fast` (the winner, fully timed), `slow` pruned
// after its probe, and kBad rejected. FLOPs 4e8: 10 us is 40 TFLOP/s.
tools::ShapeResult shape_result(std::int64_t seq_len, std::int64_t seq_len_kv, const std::string& fast, double fast_us,
                                const std::string& slow, double slow_probe_us) {
    tools::ShapeResult r;
    r.complete = true;
    r.flops = 4e8;
    // NOTES: a named key, not a nested temporary, which GCC 12 at -O3 falsely warns may be uninitialized.
    const ShapeKey key{.arch = "sm_90a", .cu_num = 132, .heads = 32, .head_dim = 128, .seq_len = seq_len,
                       .seq_len_kv = seq_len_kv};
    r.row = TunedRow{.key = key,
                     .backend = "jit", .variant = fast, .us = fast_us, .baseline_us = 40.0, .runner_up = "baseline"};
    r.candidates = {{.kernel = "baseline", .verified = true, .median_us = 40.0, .runs = 50},
                    {.kernel = fast, .verified = true, .median_us = fast_us, .runs = 50},
                    {.kernel = slow, .verified = true, .pruned = true, .median_us = slow_probe_us, .runs = tools::kProbeRuns},
                    {.kernel = kBad, .verified = false, .problem = "calc_diff 0.5 over 10 entries"}};
    return r;
}

tools::BenchShape shape(int seq_len, int seq_len_kv) { return {.seq_len = seq_len, .seq_len_kv = seq_len_kv}; }

}  // namespace

TEST_CASE("tuner: a candidate is pruned only when its probe is over the factor times the best so far") {
    CHECK(tools::is_pruned(151.0, 100.0, 1.5));
    CHECK_FALSE(tools::is_pruned(150.0, 100.0, 1.5));  // exactly the factor: still timed in full
    CHECK_FALSE(tools::is_pruned(120.0, 100.0, 1.5));
    CHECK_FALSE(tools::is_pruned(90.0, 100.0, 1.5));
    CHECK(tools::is_pruned(201.0, 100.0, 2.0));
    CHECK_FALSE(tools::is_pruned(199.0, 100.0, 2.0));
    CHECK_FALSE(tools::is_pruned(1e9, 0.0, 1.5));    // no best yet
    CHECK_FALSE(tools::is_pruned(1e9, 100.0, 0.0));  // --no-prune
    CHECK(tools::kDefaultPruneFactor == 1.5);
}

TEST_CASE("tune json: a shape's row records every candidate and reads back as a bench row") {
    const nlohmann::json row = tools::tune_json_row(shape_result(256, 4096, kFast, 10.0, kSlow, 30.0), tools::TuneSettings{});
    CHECK(row["tool"] == "mqajit tune");
    CHECK(row["kernel"] == kFast);
    CHECK(row["us"] == 10.0);
    CHECK(row["baseline_us"] == 40.0);
    CHECK(row["flops"] == 4e8);
    CHECK(row["tflops"].get<double>() == doctest::Approx(40.0));
    CHECK(row["runs"] == 50);
    CHECK(row["prune_factor"] == 1.5);
    CHECK(row["min_gain"] == 0.01);
    CHECK(row["reason"] == "fastest verified candidate");
    CHECK(row["variants_us"] == nlohmann::json{{kFast, 10.0}, {kSlow, 30.0}});  // no baseline, no rejected
    CHECK(row["pruned"] == nlohmann::json::array({kSlow}));
    REQUIRE(row["candidates"].size() == 4);
    CHECK(row["candidates"][2]["pruned"] == true);
    CHECK(row["candidates"][2]["runs"] == tools::kProbeRuns);
    CHECK(row["candidates"][3]["verified"] == false);
    CHECK(row["candidates"][3]["rejected"] == "calc_diff 0.5 over 10 entries");
    CHECK(!row["candidates"][3].contains("median_us"));  // a rejected candidate is never timed

    testing::TempDir dir("tune-json");
    const auto json = dir.path() / "tune.json";
    tools::write_tune_json(json, tools::merge_tune_json(nlohmann::json::array(), nlohmann::json::array({row})));
    const std::vector<tools::BenchRow> bench = tools::read_bench_json(json);
    REQUIRE(bench.size() == 1);
    CHECK(bench[0].arch == "sm_90a");
    CHECK(bench[0].cu_num == 132);
    CHECK(bench[0].seq_len == 256);
    CHECK(bench[0].baseline_us == 40.0);
    CHECK(bench[0].flops == 4e8);
    CHECK(bench[0].from_tuner);
    CHECK(bench[0].probe_only == std::set<std::string>{kSlow});
    CHECK(*bench[0].time_of(kSlow) == 30.0);
    CHECK(!bench[0].time_of(kBad));
}

TEST_CASE("tune json: a baseline kept over a faster variant within --min-gain says so") {
    tools::ShapeResult kept = shape_result(256, 4096, kFast, 39.8, kSlow, 90.0);
    kept.row.backend = "baseline";
    kept.row.variant = "baseline";
    kept.row.us = 40.0;
    CHECK(tools::tune_json_row(kept, tools::TuneSettings{})["reason"] ==
          "baseline kept: the fastest variant was within min_gain of it");
    kept.candidates[1].median_us = 41.0;  // no variant faster: the baseline is simply the fastest
    CHECK(tools::tune_json_row(kept, tools::TuneSettings{})["reason"] == "fastest verified candidate");
}

TEST_CASE("tune json: `mqajit report --markdown` works on the tuner's file and says which times are probes") {
    testing::TempDir dir("tune-report");
    const auto json = dir.path() / "tune.json";
    const auto csv = dir.path() / "tuned.csv";
    // (256,4096): kFast wins at 10 us, kSlow pruned at 30. (1024,4096): kSlow wins at 20, kFast pruned
    // at 40. Geometric means: kFast sqrt(10 x 40) = 20, kSlow sqrt(30 x 20) = 24.5, so kFast is the
    // best fixed variant, with a probe time at one shape.
    const tools::ShapeResult a = shape_result(256, 4096, kFast, 10.0, kSlow, 30.0);
    const tools::ShapeResult b = shape_result(1024, 4096, kSlow, 20.0, kFast, 40.0);
    tools::write_tune_json(json, nlohmann::json::array({tools::tune_json_row(a, {}), tools::tune_json_row(b, {})}));
    tuning::write_csv_file(csv, std::vector<TunedRow>{a.row, b.row});

    const tools::TuningComparison c = tools::compare_tuning(tools::load_tuned_table(csv, {}), tools::read_bench_json(json));
    CHECK(c.from_tuner);
    CHECK(c.best_fixed == kFast);
    CHECK(c.best_fixed_probe_times == 1);
    REQUIRE(c.shapes.size() == 2);
    CHECK(*c.shapes[0].tuned_us == 10.0);
    CHECK(*c.shapes[1].tuned_us == 20.0);
    CHECK(c.shapes[1].best_fixed_us == 40.0);
    CHECK(c.means.speedup_over_baseline == doctest::Approx(std::sqrt(4.0 * 2.0)));
    CHECK(c.means.speedup_over_best_fixed == doctest::Approx(std::sqrt(1.0 * 2.0)));

    const std::string md = tools::markdown_report(c, "tuned.csv", "tune.json");
    CHECK(md.find("times from one `mqajit tune --json-file` run") != std::string::npos);
    CHECK(md.find("| 1024 | 4096 | `mma16x8x32_bkv64_r2_w4_lds2` | 20.0 | 20 | 40.0 | 10 | 40.0 | 10 | 2.00x | 2.00x |") !=
          std::string::npos);
    CHECK(md.find("its probe median counts as its time") != std::string::npos);
    CHECK(md.find("probe median at 1 shape(s)") != std::string::npos);

    // The CLI reads the tuner's file the same way.
    std::string output;
    REQUIRE(testing::run_command(testing::cli_path().string() + " report --tuned " + csv.string() + " --bench " +
                                     json.string() + " --markdown",
                                 &output) == 0);
    CHECK(output.find("| geometric mean (2 shapes) |") != std::string::npos);
}

TEST_CASE("tune json: a bench row whose 'pruned' names an untimed variant is refused") {
    testing::TempDir dir("tune-json-bad");
    const auto json = dir.path() / "tune.json";
    nlohmann::json row = tools::tune_json_row(shape_result(256, 4096, kFast, 10.0, kSlow, 30.0), {});
    row["pruned"] = nlohmann::json::array({kBad});
    tools::write_tune_json(json, nlohmann::json::array({row}));
    CHECK(testing::error_kind_of([&] { tools::read_bench_json(json); }) == ErrorKind::invalid_argument);
    std::ofstream(json) << "{\"not\": \"rows\"}";
    CHECK(testing::error_kind_of([&] { tools::read_tune_json(json); }) == ErrorKind::invalid_argument);
    CHECK(tools::read_tune_json(dir.path() / "missing.json").empty());
}

TEST_CASE("tune json: rows merge one per shape, retuned in place, new ones appended") {
    const auto r = [](std::int64_t s, double us) {
        return tools::tune_json_row(shape_result(s, 4096, kFast, us, kSlow, 3 * us), {});
    };
    const nlohmann::json merged =
        tools::merge_tune_json(nlohmann::json::array({r(256, 10), r(512, 11)}), nlohmann::json::array({r(1024, 12), r(256, 9)}));
    REQUIRE(merged.size() == 3);
    CHECK(merged[0]["seq_len"] == 256);
    CHECK(merged[0]["us"] == 9.0);
    CHECK(merged[1]["seq_len"] == 512);
    CHECK(merged[2]["seq_len"] == 1024);
}

TEST_CASE("tune json: the workers' parts merge into the file in input order, keeping its rows") {
    testing::TempDir dir("tune-json-parts");
    const auto r = [](std::int64_t s, double us) {
        return tools::tune_json_row(shape_result(s, 4096, kFast, us, kSlow, 3 * us), {});
    };
    const auto file = dir.path() / "tune.json";
    const auto part0 = dir.path() / "gpu0.json", part1 = dir.path() / "gpu1.json";
    tools::write_tune_json(file, nlohmann::json::array({r(128, 5), r(256, 10)}));
    // Round robin: GPU 0 had shapes 0 and 2, GPU 1 shape 1 (which retunes 256).
    tools::write_tune_json(part0, nlohmann::json::array({r(512, 20), r(2048, 40)}));
    tools::write_tune_json(part1, nlohmann::json::array({r(256, 8)}));
    const std::vector<tools::BenchShape> shapes = {shape(512, 4096), shape(256, 4096), shape(2048, 4096)};

    CHECK(tools::merge_tune_json_parts(file, {part0, part1, dir.path() / "gpu2_never_written.json"}, shapes) == 3);
    const nlohmann::json merged = tools::read_tune_json(file);
    REQUIRE(merged.size() == 4);
    CHECK(merged[0]["seq_len"] == 128);  // the file's own row, kept
    CHECK(merged[1]["seq_len"] == 256);
    CHECK(merged[1]["us"] == 8.0);       // retuned in place
    CHECK(merged[2]["seq_len"] == 512);  // new rows in input order
    CHECK(merged[3]["seq_len"] == 2048);
    CHECK(tools::read_bench_json(file).size() == 4);

    // Parts with nothing for the shapes leave the file as it was.
    const std::string before = tools::read_tune_json(file).dump();
    CHECK(tools::merge_tune_json_parts(file, {dir.path() / "none.json"}, shapes) == 0);
    CHECK(tools::read_tune_json(file).dump() == before);
    CHECK(tools::merge_tune_json_parts(dir.path() / "fresh.json", {dir.path() / "none.json"}, shapes) == 0);
    CHECK(!std::filesystem::exists(dir.path() / "fresh.json"));
}
