// `mqajit report` on decode (paged_mqa_logits) input: a decode tuned CSV, the JSON `mqajit tune
// --op paged_mqa_logits --json-file` writes (made here by its own writer) or `mqajit bench --op
// paged_mqa_logits --json-file`'s, alone or together; mixed prefill and decode input is refused.

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/check.hpp"
#include "tests/error_kind.hpp"
#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tools/common/paged_bench_output.hpp"
#include "tools/common/report_paged_markdown.hpp"
#include "tools/common/tune_json.hpp"
#include "tuning_db/csv.hpp"

using namespace mqajit;
using namespace mqajit::testing;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

constexpr const char* kFast = "pwgmma64x64x32_bkv64_r1_w2_lds8";
constexpr const char* kSlow = "pwgmma64x64x32_bkv64_r1_w1_lds8";

PagedShapeKey key_of(std::int64_t batch, int next_n = 1) {
    return {.arch = "sm_90a", .cu_num = 132, .next_n = next_n, .heads = 64, .head_dim = 128, .block_kv = 64,
            .clean_logits = 0, .batch = batch};
}

tools::CandidateResult verified(const std::string& kernel, double median_us) {
    return {.kernel = kernel, .verified = true, .median_us = median_us, .runs = 50};
}

// A tuner's row at contexts 4096 and 32768: baseline 10 and 40 µs (mean 20), kFast 8 and 32 (16),
// kSlow 9 and 36 (18); a candidate rejected by its check has no times.
nlohmann::json tune_row(std::int64_t batch, int next_n = 1) {
    tools::PagedShapeResult r;
    r.complete = true;
    r.key = key_of(batch, next_n);
    r.row = {.key = r.key, .backend = "jit", .variant = kFast, .us = 16, .baseline_us = 20};
    r.contexts = {4096, 32768};
    r.floor_bytes = {1000, 8000};
    r.candidates = {verified("baseline", 20), verified(kFast, 16), verified(kSlow, 18),
                    {.kernel = "pwgmma64x64x32_bkv64_r1_w2_lds16", .verified = false, .problem = "calc_diff 1"}};
    r.context_us = {{"baseline", {10, 40}}, {kFast, {8, 32}}, {kSlow, {9, 36}}};
    return tools::paged_tune_json_row(r, tools::TuneSettings{});
}

// NOTES: a vector, not a braced json: nlohmann reads `{row}` as the row itself, not an array of one.
fs::path write_json(const fs::path& path, const std::vector<nlohmann::json>& rows) {
    write_text(path, nlohmann::json(rows).dump(1));
    return path;
}

fs::path write_decode_csv(const fs::path& path, const std::vector<PagedTunedRow>& rows) {
    tuning::write_csv_file(path, rows);
    return path;
}

PagedTunedRow tuned(std::int64_t batch, const std::string& variant, double us, double baseline_us) {
    return {.key = key_of(batch), .backend = variant == "baseline" ? "baseline" : "jit", .variant = variant, .us = us,
            .baseline_us = baseline_us};
}

std::string markdown(const fs::path& csv, const fs::path& json, const tools::GroupFilter& filter = {}) {
    return tools::paged_markdown_report(tools::load_paged_report(csv, json, filter), csv.string(), json.string());
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::invalid_argument);
        return e.what();
    }
    FAIL("no error");
    return {};
}

}  // namespace

TEST_CASE("report paged: a decode tune JSON alone gives a table per next_n, a row per batch, medians per context") {
    testing::TempDir dir("report-paged-json");
    const fs::path json = write_json(dir.path() / "tune.json", {tune_row(32), tune_row(4), tune_row(1, 2)});
    const std::string text = markdown({}, json);
    INFO(text);
    CHECK(contains(text, "`mqajit tune --op paged_mqa_logits --json-file` run"));
    CHECK(contains(text, "#### sm_90a, 132 SMs, H=64, next_n=1 (D=128, block_kv=64, clean_logits=0)"));
    CHECK(contains(text, "#### sm_90a, 132 SMs, H=64, next_n=2 "));
    CHECK(contains(text, "| batch | tuned choice | tuned µs | baseline µs | tuned vs baseline | µs at 4096 | µs at 32768 |"));
    CHECK(contains(text, "| 32 | `pwgmma64x64x32_bkv64_r1_w2_lds8` | 16.0 | 20.0 | 1.25x | 8.0 / 10.0 | 32.0 / 40.0 |"));
    // Batches ascend within a table whatever the file's order; the mean covers the table's rows.
    CHECK(text.find("| 4 |") < text.find("| 32 |"));
    CHECK(contains(text, "| geometric mean (2 batches) | | | | 1.25x | | |"));
    CHECK(contains(text, "| geometric mean (1 batches) |"));
    CHECK_FALSE(contains(text, "no time"));
}

TEST_CASE("report paged: a decode CSV names the kernels, and with a JSON its times are the JSON's, per context") {
    testing::TempDir dir("report-paged-csv");
    const fs::path csv = write_decode_csv(dir.path() / "paged_mqa_logits_tuned_x.csv",
                                          {tuned(32, kSlow, 99, 120), tuned(64, "baseline", 50, 50)});
    const std::string alone = markdown(csv, {});
    INFO(alone);
    CHECK(contains(alone, "the tuner's times, each the geometric mean"));
    CHECK(contains(alone, "| batch | tuned choice | tuned µs | baseline µs | tuned vs baseline |\n|---|---|---|---|---|\n"));
    CHECK(contains(alone, "| 32 | `pwgmma64x64x32_bkv64_r1_w1_lds8` | 99.0 | 120.0 | 1.21x |\n"));
    CHECK(contains(alone, "| 64 | `baseline` | 50.0 | 50.0 | 1.00x |\n"));

    const fs::path json = write_json(dir.path() / "tune.json", {tune_row(32)});
    const std::string joined = markdown(csv, json);
    INFO(joined);
    // The CSV's choice (kSlow, not the run's winner) timed by the run: geometric mean of 9 and 36.
    CHECK(contains(joined, "| 32 | `pwgmma64x64x32_bkv64_r1_w1_lds8` | 18.0 | 20.0 | 1.11x | 9.0 / 10.0 | 36.0 / 40.0 |"));
    CHECK(contains(joined, "| 64 | `baseline` | - | - |  |  |  |"));  // not in the run
    CHECK(contains(joined, "1 row(s) have no time for the tuned choice and 1 none for the baseline"));

    CHECK(contains(message_of([&] { (void)tools::load_paged_report(csv, {}, {.heads = 32}); }),
                   "no decode rows match the filter"));
    CHECK(tools::load_paged_report(csv, {}, {.arch = "sm90a", .cu_num = 132}).rows.size() == 2);
}

TEST_CASE("report paged: a decode bench JSON gives each context's medians, and a shape whose kernel varies needs the CSV") {
    testing::TempDir dir("report-paged-bench");
    auto bench_row = [](int context, const std::string& kernel, double us, double baseline_us) {
        tools::PagedBenchResult r{.shape = {.batch = 8, .next_n = 1, .heads = 64, .head_dim = 128, .block_kv = 64,
                                            .contexts = {context}, .clean_logits = 0},
                                  .context = context, .arch = "sm_90a", .cu_num = 132, .kernel = kernel};
        r.chosen = tools::Timing{.median_us = us, .min_us = us, .runs = 50};
        r.baseline = tools::Timing{.median_us = baseline_us, .min_us = baseline_us, .runs = 50};
        return tools::paged_bench_json_row(r);
    };
    const fs::path same = write_json(dir.path() / "same.json", {bench_row(4096, kFast, 4, 5), bench_row(65536, kFast, 16, 20)});
    const std::string text = markdown({}, same);
    INFO(text);
    CHECK(contains(text, "`mqajit bench --op paged_mqa_logits --json-file` run"));
    CHECK(contains(text, "| 8 | `pwgmma64x64x32_bkv64_r1_w2_lds8` | 8.0 | 10.0 | 1.25x | 4.0 / 5.0 | 16.0 / 20.0 |"));

    const fs::path varies =
        write_json(dir.path() / "varies.json", {bench_row(4096, kFast, 4, 5), bench_row(65536, kSlow, 16, 20)});
    CHECK(contains(message_of([&] { (void)tools::load_paged_report({}, varies, {}); }), "give --tuned the decode table"));
}

TEST_CASE("report paged: prefill and decode rows in one JSON, or a JSON of the other operator, are refused by name") {
    testing::TempDir dir("report-paged-mixed");
    const nlohmann::json prefill_row = {{"heads", 64}, {"head_dim", 128}, {"seq_len", 256}, {"seq_len_kv", 4096},
                                        {"baseline_us", 10}, {"flops", 1e9}, {"variants_us", nlohmann::json::object()}};
    const fs::path mixed = write_json(dir.path() / "mixed.json", {prefill_row, tune_row(32)});
    CHECK(contains(message_of([&] { (void)tools::read_bench_json(mixed); }), "holds both mqa_logits (prefill, row 0) "
                   "and paged_mqa_logits (decode, row 1) rows"));
    CHECK(contains(message_of([&] { (void)tools::load_paged_report({}, mixed, {}); }), "holds both"));
    const fs::path decode = write_json(dir.path() / "decode.json", {tune_row(32)});
    CHECK(contains(message_of([&] { (void)tools::read_bench_json(decode); }), "holds paged_mqa_logits (decode) rows"));
    const fs::path prefill = write_json(dir.path() / "prefill.json", {prefill_row});
    CHECK(contains(message_of([&] { (void)tools::load_paged_report({}, prefill, {}); }), "holds no paged_mqa_logits rows"));
    CHECK(tools::tuned_csv_op(write_decode_csv(dir.path() / "d.csv", {tuned(1, kFast, 1, 2)})) == tools::ReportOp::decode);
}

TEST_CASE("report paged cli: decode input writes markdown, while -o and a prefill file beside it are refused with exit 2") {
    testing::TempDir dir("report-paged-cli");
    const fs::path json = write_json(dir.path() / "tune.json", {tune_row(32)});
    const fs::path csv = write_decode_csv(dir.path() / "t.csv", {tuned(32, kFast, 16, 20)});
    const fs::path prefill_csv = dir.path() / "prefill.csv";
    write_text(prefill_csv, "gfx,cu_num,heads,head_dim,clean_logits,seq_len,seq_len_kv,backend,variant,us\n"
                            "sm_90a,132,64,128,0,256,4096,baseline,baseline,10\n");
    const std::string cli = "'" + testing::cli_path().string() + "' report";
    std::string output;
    CHECK(testing::run_command(cli + " --bench '" + json.string() + "' --markdown", &output) == 0);
    CHECK(contains(output, "| 32 | `pwgmma64x64x32_bkv64_r1_w2_lds8` | 16.0 | 20.0 | 1.25x |"));
    const fs::path file = dir.path() / "out" / "decode.md";
    CHECK(testing::run_command(cli + " --tuned '" + csv.string() + "' --bench '" + json.string() + "' --markdown '" +
                                   file.string() + "'", &output) == 0);
    CHECK(contains(read_text(file), "| 32 | `pwgmma64x64x32_bkv64_r1_w2_lds8` | 16.0 | 20.0 | 1.25x | 8.0 / 10.0 |"));
    CHECK(testing::run_command(cli + " --tuned '" + csv.string() + "' -o '" + (dir.path() / "m.svg").string() + "'",
                               &output) == 2);
    CHECK(contains(output, "-o draws the heat map of a prefill table"));
    CHECK(testing::run_command(cli + " --tuned '" + prefill_csv.string() + "' --bench '" + json.string() + "' --markdown",
                               &output) == 2);
    CHECK(contains(output, "is a prefill (mqa_logits) table but --bench"));
    CHECK(testing::run_command(cli + " --markdown", &output) == 2);
    CHECK(contains(output, "give --tuned FILE.csv"));
}
