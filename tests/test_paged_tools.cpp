// The decode tools without a GPU: `mqajit bench/tune --op paged_mqa_logits` shapes (the shipped
// untuned decode files, flags), candidates, the candidate search both tuners share (on fake checks
// and timings), the tuned CSV rows round-tripping through `db import` and `db check`, the JSON
// rows, the bytes floor, and the CLI's refusals.
// NOTES: the decode tuner itself is not run on the fake ROCm runtime the prefill tools use
// (tests/test_amd_tools_fake.cpp) yet; the AMD decode baseline and reference exist now and the fake
// computes decode launches (tests/test_hip_paged_dispatch_fake.cpp), so it could be. The search and
// the rows it writes are tested here instead.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <atomic>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "codegen/paged_variant_support.hpp"
#include "runtime/backend.hpp"
#include "tests/error_kind.hpp"
#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tools/common/candidate_search.hpp"
#include "tools/common/paged_bench_output.hpp"
#include "tools/common/paged_shapes.hpp"
#include "tools/common/paged_tuner.hpp"
#include "tools/common/shapes.hpp"
#include "tools/common/tune_json.hpp"
#include "tools/common/tune_output_csv.hpp"
#include "tuning_db/csv.hpp"

using namespace mqajit;
using namespace mqajit::testing;

namespace {

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }
std::string quoted(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

int cli(const std::string& arguments, std::string* output) {
    const int code = run_command("env -u MQAJIT_ARCH " + quoted(cli_path()) + " " + arguments, output);
    INFO(*output);
    return code;
}

std::filesystem::path untuned(const std::string& model) {
    return shipped_configs_dir() / "model_configs" / fmt::format("paged_mqa_logits_untuned_{}.csv", model);
}

const tools::PagedBenchShape kShape{.batch = 32, .next_n = 2, .heads = 64, .head_dim = 128, .block_kv = 64,
                                    .contexts = {4096, 32768}};

// Fake checks and timings: `times` gives each kernel's full median, its probe median x `probe`.
struct FakeSearch {
    std::map<std::string, double> times{};
    std::set<std::string> failing{};
    double probe = 1.0;
    std::map<std::string, int> timed_runs{};  // runs asked of each kernel, all timings together

    tools::CandidateSearch search() {
        return {.label = "fake shape",
                .verify = [this](const std::string& kernel) {
                    return tools::CandidateResult{.kernel = kernel, .verified = !failing.contains(kernel),
                                                  .problem = failing.contains(kernel) ? "calc_diff 0.5" : ""};
                },
                .time = [this](const std::string& kernel, const tools::TimingOptions& options) {
                    timed_runs[kernel] += options.timed_runs;
                    const double us = times.at(kernel) * (options.timed_runs == tools::kProbeRuns ? probe : 1.0);
                    return tools::Timing{.median_us = us, .min_us = us, .max_us = us, .runs = options.timed_runs};
                }};
    }
};

}  // namespace

TEST_CASE("paged tools: the shipped untuned decode files read as 48 shapes each, over the contexts of the rule") {
    for (const auto& [model, heads] : {std::pair{"glm5", 32}, std::pair{"deepseek_v32", 64}}) {
        CAPTURE(model);
        const std::vector<tools::PagedBenchShape> shapes = tools::read_paged_shapes_csv(untuned(model));
        REQUIRE(shapes.size() == 48);
        for (const tools::PagedBenchShape& s : shapes) {
            CHECK(s.heads == heads);
            CHECK(s.head_dim == 128);
            CHECK(s.block_kv == 64);
            CHECK(s.arch == "sm_90a");
            CHECK(s.cu_num == 132);
            CHECK(s.clean_logits == 0);
            CHECK(s.contexts == tools::default_decode_contexts(s.batch));
        }
        CHECK(shapes.front().contexts == std::vector<int>{4096, 32768, 131072});
        CHECK(shapes.back().next_n == 4);
        CHECK(shapes.back().batch == 2048);
        CHECK(shapes.back().contexts == std::vector<int>{4096});
    }
    CHECK(tools::shipped_paged_shapes_file("glm5") == untuned("glm5"));
    CHECK(tools::shipped_paged_shapes_file("deepseek") == untuned("deepseek_v32"));
    CHECK(error_kind_of([] { (void)tools::shipped_paged_shapes_file("llama"); }) == ErrorKind::not_found);
}

TEST_CASE("paged tools: a decode shapes file is read by its header, and what is malformed names file:line") {
    TempDir dir("paged-shapes");
    auto write = [&](const std::string& text) {
        const auto path = dir.path() / "shapes.csv";
        write_text(path, text);
        return path;
    };
    const auto minimal = tools::read_paged_shapes_csv(write("context_len,heads,batch,next_n,extra\n8192;512,32,7,3,x\n\n"));
    REQUIRE(minimal.size() == 1);
    CHECK(minimal[0].batch == 7);
    CHECK(minimal[0].next_n == 3);
    CHECK(minimal[0].heads == 32);
    CHECK(minimal[0].head_dim == 128);  // defaults
    CHECK(minimal[0].block_kv == 64);
    CHECK(minimal[0].contexts == std::vector<int>{8192, 512});
    CHECK(minimal[0].arch.empty());
    CHECK_FALSE(minimal[0].clean_logits.has_value());

    auto refusal = [&](const std::string& text) {
        const auto path = write(text);
        try {
            (void)tools::read_paged_shapes_csv(path);
        } catch (const Error& e) {
            CHECK(e.kind() == ErrorKind::invalid_argument);
            return std::string(e.what());
        }
        FAIL("no error for " << text);
        return std::string();
    };
    CHECK(contains(refusal("batch,next_n,heads\n1,1,64\n"), "this header lacks context_len"));
    CHECK(contains(refusal("seq_len,seq_len_kv\n256,4096\n"), "names batch, next_n, heads and context_len"));
    CHECK(contains(refusal("batch,next_n,heads,context_len\n1,1,64,4096;x\n"), "shapes.csv:2 context_len"));
    CHECK(contains(refusal("batch,next_n,heads,context_len\n1,1,64,4096;\n"), "positive integers separated by ';'"));
    CHECK(contains(refusal("batch,next_n,heads,context_len\n0,1,64,4096\n"), "is not a count from 1 to 2^30"));
    CHECK(contains(refusal("batch,next_n,heads,context_len,clean_logits\n1,1,64,4096,2\n"), "clean_logits is '2'"));
    CHECK(contains(refusal("batch,next_n,heads,context_len\n1,1\n"), "shapes.csv:2: missing column"));
    CHECK(error_kind_of([&] { (void)tools::read_paged_shapes_csv(dir.path() / "none.csv"); }) == ErrorKind::not_found);
}

TEST_CASE("paged tools: shapes from flags, in the modes asked, grouped by shape") {
    CHECK(tools::parse_positive_list("--batch", "1,32,128") == std::vector<int>{1, 32, 128});
    for (const char* bad : {"", "0", "1,,2", "x", "-4", "1,"})
        CHECK(error_kind_of([&] { (void)tools::parse_positive_list("--batch", bad); }) == ErrorKind::invalid_argument);
    const auto shapes = tools::paged_shapes_from_lists({1, 32}, {1, 2}, {64}, 128, 64, {4096, 32768});
    REQUIRE(shapes.size() == 4);
    CHECK(shapes[1].batch == 1);
    CHECK(shapes[1].next_n == 2);
    CHECK(shapes[2].batch == 32);
    CHECK(shapes[3].contexts == std::vector<int>{4096, 32768});

    const auto modes = tools::in_modes(shapes, std::vector<int>{0, 1});
    REQUIRE(modes.size() == 8);
    CHECK(modes[0].clean_logits == 0);
    CHECK(modes[1].clean_logits == 1);
    const auto groups = tools::group_modes_of_a_shape(modes);
    REQUIRE(groups.size() == 4);
    CHECK(groups[0].size() == 2);
    CHECK(tools::paged_shape_label(modes[1]) == "B=1 next_n=1 H=64 D=128 block_kv=64 clean_logits=1");
    CHECK(tools::contexts_field(shapes[0].contexts) == "4096;32768");
}

TEST_CASE("paged tools: the candidates are the baseline and every registered paged variant that fits the shape") {
    const std::vector<std::string> all = tools::paged_tuning_candidates("sm_90a", kShape);
    REQUIRE(all.size() > 2);
    CHECK(all.front() == "baseline");
    const Arch sm90a = Arch::parse("sm_90a");
    for (std::size_t i = 1; i < all.size(); ++i) {
        CAPTURE(all[i]);
        const Variant v = Variant::parse(all[i]);
        CHECK(v.rows == 2);
        CHECK(v.n == 128);
        CHECK(paged_variant_support(sm90a, {.heads = 64, .head_dim = 128, .next_n = 2, .block_kv = 64}, v).ok);
    }
    const auto kept = tools::paged_tuning_candidates("sm_90a", kShape, {"baseline", all[1]});
    CHECK(kept.size() == all.size() - 2);
    CHECK(std::find(kept.begin(), kept.end(), all[1]) == kept.end());
    // On AMD the pmfma variants that fit (never run on AMD hardware yet).
    CHECK(tools::paged_tuning_candidates("gfx950", kShape) ==
          std::vector<std::string>{"baseline", "pmfma32x32x64_bkv64_r2_w2_lds2", "pmfma32x32x64_bkv64_r2_w2_lds3",
                                   "pmfma16x16x128_bkv64_r2_w4_lds2"});

    CHECK(tools::paged_kernel_support(sm90a, kShape, "baseline").ok);
    const Support prefill = tools::paged_kernel_support(sm90a, kShape, "wgmma64x128x32_bkv128_r4_w2_lds4");
    CHECK_FALSE(prefill.ok);
    CHECK(contains(prefill.reason, "runs pwgmma or pmfma variants"));
    const Support other_next_n = tools::paged_kernel_support(sm90a, kShape, "pwgmma64x64x32_bkv64_r1_w2_lds8");
    CHECK_FALSE(other_next_n.ok);
    CHECK(error_kind_of([&] { (void)tools::paged_kernel_support(sm90a, kShape, "pwgmma_oops"); }) ==
          ErrorKind::invalid_argument);
}

TEST_CASE("candidate search: rejected candidates are never timed, slow probes are pruned, finalists re-timed") {
    FakeSearch fake{.times = {{"baseline", 20}, {"a", 10}, {"b", 40}, {"c", 12}, {"d", 11}, {"bad", 1}},
                    .failing = {"bad"}};
    std::vector<std::string> lines;
    const tools::TuneSettings settings{.timed_runs = 50};
    const tools::SearchOutcome outcome =
        tools::search_candidates({"baseline", "a", "bad", "b", "c", "d"}, fake.search(), settings,
                                 [&](const std::string& line) { lines.push_back(line); });
    REQUIRE(outcome.complete);
    REQUIRE(lines.size() == 6);
    CHECK(contains(lines[2], "bad: REJECTED, not timed: calc_diff 0.5"));
    CHECK_FALSE(fake.timed_runs.contains("bad"));
    CHECK(contains(lines[3], "b: pruned: 40.0 us in a 5-run probe, >1.5x the best (10.0 us)"));
    CHECK(fake.timed_runs["b"] == tools::kProbeRuns);
    CHECK(fake.timed_runs["baseline"] == 50);  // never probed: its full median is the row's baseline_us
    CHECK(fake.timed_runs["a"] == tools::kProbeRuns + 4 * 50);  // probe, full, three finalist rounds
    CHECK(fake.timed_runs["d"] == tools::kProbeRuns + 4 * 50);
    CHECK(fake.timed_runs["c"] == tools::kProbeRuns + 4 * 50);
    REQUIRE(outcome.ranked.size() == 4);  // a, d, c, baseline: verified and fully timed
    CHECK(outcome.winner().kernel == "a");
    CHECK(outcome.runner_up() == "d");
    CHECK(outcome.baseline_us() == 20.0);

    PagedTunedRow row{.key = PagedShapeKey{.arch = "sm_90a", .cu_num = 132, .next_n = 2, .heads = 64, .head_dim = 128,
                                           .block_kv = 64, .clean_logits = 0, .batch = 32}};
    tools::record_choice(row, outcome, tools::TuneSettings{.compiler_version = "nvrtc 13.0", .driver_version = "13.0"});
    CHECK(row.backend == "jit");
    CHECK(row.variant == "a");
    CHECK(row.us == 10.0);
    CHECK(row.runner_up == "d");
    CHECK(row.tuner_version == tools::kTunerVersion);
    CHECK(row.date.size() == 10);

    // A resumed tune skips the shape only for a row of this tuner, compiler and driver.
    const tools::TuneSettings same{.compiler_version = "nvrtc 13.0", .driver_version = "13.0"};
    CHECK(tools::tuned_alike(row, row.key, same));
    PagedShapeKey other_batch = row.key;
    other_batch.batch = 64;
    CHECK_FALSE(tools::tuned_alike(row, other_batch, same));
    CHECK_FALSE(tools::tuned_alike(row, row.key, tools::TuneSettings{.compiler_version = "nvrtc 13.1",
                                                                     .driver_version = "13.0"}));
    CHECK_FALSE(tools::tuned_alike(row, row.key, tools::TuneSettings{.compiler_version = "nvrtc 13.0",
                                                                     .driver_version = "13.1"}));
    PagedTunedRow older = row;
    older.tuner_version = "mqajit-tune 0.1.0";  // timed decode over shared cache blocks
    CHECK_FALSE(tools::tuned_alike(older, row.key, same));

    // The baseline winning is recorded as the baseline backend.
    FakeSearch slow{.times = {{"baseline", 5}, {"a", 7}}};  // within the prune factor: timed, the runner-up
    const auto baseline_wins = tools::search_candidates({"baseline", "a"}, slow.search(), {}, [](const std::string&) {});
    tools::record_choice(row, baseline_wins, {});
    CHECK(row.backend == "baseline");
    CHECK(row.variant == "baseline");
    CHECK(row.runner_up == "a");
}

TEST_CASE("candidate search: the baseline is kept over a variant that beats it by no more than --min-gain") {
    auto search_with = [](double variant_us, double min_gain, std::vector<std::string>* lines) {
        FakeSearch fake{.times = {{"baseline", 100}, {"a", variant_us}, {"b", 130}}};
        return tools::search_candidates({"baseline", "a", "b"}, fake.search(), {.min_gain = min_gain},
                                        [&](const std::string& line) { lines->push_back(line); });
    };
    std::vector<std::string> lines;
    const tools::SearchOutcome close = search_with(99.5, 0.01, &lines);  // 0.5% less time: noise
    CHECK(close.winner().kernel == "baseline");
    CHECK(close.runner_up() == "a");
    REQUIRE(close.ranked.size() == 3);
    CHECK(close.candidates[close.ranked[2]].kernel == "b");
    REQUIRE(lines.size() == 4);
    CHECK(contains(lines[3], "baseline kept: a took 99.5 us against its 100.0 us, 0.50% less, not more than --min-gain 1%"));

    lines.clear();
    CHECK(search_with(50.0, 0.5, &lines).winner().kernel == "baseline");  // exactly the margin: still kept
    CHECK(search_with(98.9, 0.01, &lines).winner().kernel == "a");
    CHECK(search_with(99.5, 0.0, &lines).winner().kernel == "a");  // --min-gain 0: the fastest wins
    CHECK(search_with(96.0, 0.05, &lines).winner().kernel == "baseline");
    CHECK(tools::TuneSettings{}.min_gain == tools::kDefaultMinGain);
    CHECK(tools::kDefaultMinGain == 0.01);

    // Without a timed baseline (rejected) the fastest variant wins however close the others are.
    FakeSearch no_baseline{.times = {{"a", 99.5}, {"c", 99.6}}, .failing = {"baseline"}};
    const auto outcome = tools::search_candidates({"baseline", "a", "c"}, no_baseline.search(), {},
                                                  [](const std::string&) {});
    CHECK(outcome.winner().kernel == "a");
}

TEST_CASE("candidate search: an interrupt stops it incomplete, and a shape nothing passes is an error") {
    std::atomic<bool> interrupted{false};
    FakeSearch fake{.times = {{"baseline", 20}, {"a", 10}}};
    tools::CandidateSearch search = fake.search();
    auto verify = search.verify;
    search.verify = [&](const std::string& kernel) {
        interrupted = kernel == "a";
        return verify(kernel);
    };
    const auto stopped = tools::search_candidates({"baseline", "a", "b"}, search, {.interrupted = &interrupted},
                                                  [](const std::string&) {});
    CHECK_FALSE(stopped.complete);
    CHECK(stopped.candidates.size() == 2);

    FakeSearch none{.failing = {"baseline", "a"}};
    CHECK(error_kind_of([&] {
              (void)tools::search_candidates({"baseline", "a"}, none.search(), {}, [](const std::string&) {});
          }) == ErrorKind::internal);

    // --run-config's re-check: a kernel failing its check is not timed; one that passes gives its drift.
    const tools::RecheckResult failed = tools::recheck_candidate(none.search(), "a", 10.0, {});
    CHECK_FALSE(failed.verified);
    CHECK(failed.problem == "calc_diff 0.5");
    const tools::RecheckResult drift = tools::recheck_candidate(fake.search(), "a", 8.0, {});
    CHECK(drift.verified);
    CHECK(drift.measured_us == 10.0);
    CHECK(drift.drift == doctest::Approx(0.25));
}

TEST_CASE("paged tools: tuned rows written as tune writes them import and check through `db --op paged_mqa_logits`") {
    TempDir dir("paged-tuned-csv");
    const auto csv = dir.path() / "paged_mqa_logits_tuned_glm5.csv";
    tools::PagedTuneOutputCsv table;
    // The shipped decode table's exact header.
    std::ifstream shipped(shipped_configs_dir() / "paged_mqa_logits_tuned.csv");
    std::string shipped_header;
    std::getline(shipped, shipped_header);
    CHECK(table.text() == shipped_header + "\n");

    const tools::PagedBenchShape glm5_shape{.batch = 1, .next_n = 1, .heads = 32, .contexts = {4096}};
    const std::vector<std::string> candidates = tools::paged_tuning_candidates("sm_90a", glm5_shape);
    REQUIRE(candidates.size() > 1);
    // The baseline at 9 us against one variant at `us`.
    auto row_for = [&](std::int64_t batch, const std::string& variant, double us) {
        FakeSearch fake{.times = {{"baseline", 9.0}, {variant, us}}};
        const auto outcome = tools::search_candidates({"baseline", variant}, fake.search(), {}, [](const std::string&) {});
        // NOTES: 77 SMs keeps these rows apart from the shipped sm_90a table (132 SMs).
        PagedTunedRow row{.key = PagedShapeKey{.arch = "sm_90a", .cu_num = 77, .next_n = 1, .heads = 32,
                                               .head_dim = 128, .block_kv = 64, .clean_logits = 0, .batch = batch}};
        tools::record_choice(row, outcome, {.compiler_version = "nvrtc 13.0", .driver_version = "13.0"});
        return row;
    };
    table.upsert(row_for(1, candidates[1], 6.5));
    table.upsert(row_for(32, candidates.back(), 8.25));
    table.upsert(row_for(1, candidates[1], 12.0));  // the baseline wins at batch 1 after all: the line is replaced
    table.write(csv);
    const auto reread = tools::PagedTuneOutputCsv::read(csv);
    REQUIRE(reread.rows().size() == 2);
    CHECK(reread.rows()[0].backend == "baseline");
    CHECK(reread.rows()[1].variant == candidates.back());
    CHECK(reread.problems().empty());
    // A prefill table is no decode table.
    CHECK(error_kind_of([] { (void)tools::PagedTuneOutputCsv::parse(kCsvHeader, "prefill.csv"); }) ==
          ErrorKind::invalid_argument);

    std::string output;
    const std::string db = "db --db " + quoted(dir.path() / "user.db") + " ";
    CHECK(cli(db + "check --op paged_mqa_logits " + quoted(csv), &output) == 0);
    CHECK(cli(db + "import --op paged_mqa_logits " + quoted(csv), &output) == 0);
    CHECK(cli(db + "lookup --op paged_mqa_logits --arch sm_90a --cu-num 77 --heads 32 --head-dim 128 --next-n 1 "
                   "--block-kv 64 --batch 100",
              &output) == 0);
    CHECK(output.ends_with(candidates.back() + "\n"));
    CHECK(cli(db + "list --op paged_mqa_logits --user-only", &output) == 0);
    CHECK(contains(output, "baseline"));
}

TEST_CASE("paged tools: the tune JSON row has every candidate with its medians per context, and reruns replace it") {
    tools::PagedShapeResult result{.complete = true,
                                   .key = PagedShapeKey{.arch = "sm_90a", .cu_num = 132, .next_n = 2, .heads = 64,
                                                        .head_dim = 128, .block_kv = 64, .batch = 32},
                                   .contexts = {4096, 32768},
                                   .floor_bytes = {1000, 8000},
                                   .candidates = {{.kernel = "baseline", .verified = true, .median_us = 20, .runs = 50},
                                                  {.kernel = "x", .problem = "NaN"}},
                                   .context_us = {{"baseline", {10, 40}}}};
    result.row = PagedTunedRow{.key = result.key, .backend = "baseline", .variant = "baseline", .us = 20,
                               .baseline_us = 20.0};
    const nlohmann::json row = tools::paged_tune_json_row(result, {});
    CHECK(row["op"] == "paged_mqa_logits");
    CHECK(row["batch"] == 32);
    CHECK(row["next_n"] == 2);
    CHECK(row["contexts"] == nlohmann::json::array({4096, 32768}));
    CHECK(row["kernel"] == "baseline");
    CHECK(row["baseline_us"] == 20.0);
    CHECK(row["candidates"][0]["context_us"] == nlohmann::json::array({10.0, 40.0}));
    CHECK(row["candidates"][1]["rejected"] == "NaN");
    CHECK_FALSE(row["candidates"][1].contains("context_us"));

    nlohmann::json other = row;
    other["batch"] = 64;
    nlohmann::json again = row;
    again["us"] = 19.0;
    const nlohmann::json merged = tools::merge_tune_json<PagedShapeKey>(nlohmann::json::array({row, other}),
                                                                        nlohmann::json::array({again}));
    REQUIRE(merged.size() == 2);
    CHECK(merged[0]["us"] == 19.0);
    CHECK(merged[1]["batch"] == 64);
}

TEST_CASE("paged tools: the bytes floor counts keys and scales once per request, q, weights and the logits written") {
    const tools::HostPagedProblem p = tools::make_paged_problem({.batch = 3, .next_n = 2, .heads = 32, .head_dim = 64,
                                                                 .block_kv = 64, .average_context = 200, .seed = 5});
    const std::int64_t inputs = p.rows() * 32 * 64 + p.rows() * 32 * 4;
    CHECK(tools::paged_floor_bytes(p, false) == p.keys_read() * 68 + inputs + p.visible_pairs() * 4);
    CHECK(tools::paged_floor_bytes(p, true) == p.keys_read() * 68 + inputs + p.rows() * p.max_context_len * 4);
    // The check problem keeps the batch and shortens the contexts to its token budget.
    const tools::PagedBenchShape wide{.batch = 2048, .next_n = 4, .heads = 32, .contexts = {4096}};
    const tools::PagedProblemSpec check = tools::paged_check_spec(wide, 1);
    CHECK(check.batch == 2048);
    CHECK(check.average_context == tools::kPagedCheckTokens / 2048);
    CHECK(tools::paged_check_spec(kShape, 1).average_context == 32768);
}

TEST_CASE("paged tools: a bench line without a timing (its check failed) says so and shows no time") {
    tools::PagedBenchResult r{.shape = kShape, .context = 4096, .arch = "sm_90a", .cu_num = 132,
                              .kernel = "pwgmma64x128x32_bkv64_r2_w2_lds8", .floor_bytes = 4'296'000'000, .checked = true,
                              .verdict = " CHECK FAILED pwgmma64x128x32_bkv64_r2_w2_lds8: NaN"};
    r.shape.clean_logits = 0;
    r.baseline = tools::Timing{.median_us = 2000, .min_us = 1900, .runs = 50};
    const std::string line = tools::paged_bench_table_line(r);
    CHECK(contains(line, "CHECK FAILED"));
    CHECK(contains(line, "2000.0"));
    CHECK(contains(line, "1000.0"));  // the floor: 4.296 GB at 4296 GB/s
    const nlohmann::json row = tools::paged_bench_json_row(r);
    CHECK(row["check_failed"] == true);
    CHECK_FALSE(row.contains("us"));
    CHECK(row["baseline_us"] == 2000.0);

    r.verdict.clear();
    r.chosen = tools::Timing{.median_us = 1250, .min_us = 1200, .runs = 50};
    const nlohmann::json timed = tools::paged_bench_json_row(r);
    CHECK(timed["us"] == 1250.0);
    CHECK(timed["floor_fraction"] == doctest::Approx(0.8));
    CHECK(timed["gb_per_s"] == doctest::Approx(3436.8));
    CHECK(contains(tools::paged_bench_table_line(r), " 80%"));
}

TEST_CASE("paged cli: bench and tune --op paged_mqa_logits refuse bad usage with exit 2 before any GPU") {
    std::string output;
    CHECK(cli("bench --op paged", &output) == 2);
    CHECK(cli("tune --op decode -i a.csv -o b.csv", &output) == 2);
    CHECK(cli("bench --batch 4 --context-len 4096", &output) == 2);
    CHECK(contains(output, "add --op paged_mqa_logits"));
    CHECK(cli("bench --op paged_mqa_logits --kv-splits 2", &output) == 2);
    CHECK(contains(output, "--kv-splits is for mqa_logits"));
    CHECK(cli("bench --op paged_mqa_logits --logits-dtype bfloat16", &output) == 2);
    CHECK(contains(output, "--logits-dtype is for mqa_logits"));
    CHECK(cli("bench --logits-dtype float16", &output) == 2);
    CHECK(cli("bench --op paged_mqa_logits --shapes glm5 --batch 4", &output) == 2);
    CHECK(cli("bench --op paged_mqa_logits --batch 4", &output) == 2);
    CHECK(contains(output, "need --batch and --context-len"));
    CHECK(cli("bench --op paged_mqa_logits --batch 0 --context-len 4096", &output) == 2);
    CHECK(cli("bench --op paged_mqa_logits --shapes seq.csv", &output) == 1);  // no such file
    CHECK(cli("bench --op paged_mqa_logits --variant pwgmma_oops --batch 1 --context-len 64", &output) == 2);
    // A variant that cannot serve a shape of the file (its gfx column says sm_90a): H=32 is no N=64 r=1.
    CHECK(cli("bench --op paged_mqa_logits --shapes glm5 --variant pwgmma64x64x32_bkv64_r1_w2_lds8", &output) == 2);
    CHECK(contains(output, "--variant pwgmma64x64x32_bkv64_r1_w2_lds8 cannot serve B=1 next_n=1 H=32"));
    CHECK(contains(output, "N=64 must equal r x heads"));
    // With MQAJIT_ARCH the flags' shapes are checked the same way.
    CHECK(run_command("MQAJIT_ARCH=sm_90a " + quoted(cli_path()) + " bench --op paged_mqa_logits --batch 1 "
                      "--context-len 64 --next-n 2 --variant pwgmma64x64x32_bkv64_r1_w2_lds8", &output) == 2);
    CHECK(contains(output, "r=1 must equal the call's next_n, 2"));

    CHECK(cli("tune --op paged_mqa_logits -i " + quoted(untuned("glm5")) + " -o x.csv --devices 0,1", &output) == 2);
    CHECK(contains(output, "--devices is for mqa_logits"));
    CHECK(cli("tune --op paged_mqa_logits -i " + quoted(untuned("glm5")) + " -o x.csv --context-len 4096", &output) == 2);
    CHECK(cli("tune -i a.csv -o b.csv --context-len 4096", &output) == 2);
    CHECK(cli("tune --op paged_mqa_logits --run-config x.csv --context-len 0", &output) == 2);
}

TEST_CASE("paged cli: without a GPU bench and tune --op paged_mqa_logits refuse in one line and write nothing") {
    if (live_driver_status().available) MQAJIT_SKIP("a GPU is present: the no-GPU refusal is not exercised here");
    TempDir dir("paged-cli-nogpu");
    const auto out = dir.path() / "tuned.csv";
    const auto json = dir.path() / "tune.json";
    std::string output;
    CHECK(cli("bench --op paged_mqa_logits --check --batch 1,32 --context-len 4096 --json-file " + quoted(json),
              &output) == 1);
    CHECK(contains(output, "bench needs a GPU"));
    CHECK(cli("bench --op paged_mqa_logits --shapes deepseek --variant all", &output) == 1);
    CHECK(contains(output, "bench needs a GPU"));
    CHECK(cli("tune --op paged_mqa_logits -i " + quoted(untuned("deepseek_v32")) + " -o " + quoted(out) +
                  " --json-file " + quoted(json) + " --exclude baseline",
              &output) == 1);
    CHECK(contains(output, "excluded by the user (--exclude): baseline\n"));
    CHECK(contains(output, "tuning needs a GPU"));
    CHECK_FALSE(std::filesystem::exists(out));
    CHECK_FALSE(std::filesystem::exists(json));
    CHECK(cli("tune --op paged_mqa_logits --run-config " + quoted(shipped_configs_dir() / "paged_mqa_logits_tuned.csv"),
              &output) == 1);
    CHECK(contains(output, "tuning needs a GPU"));
}
