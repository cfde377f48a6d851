// The mqa_topk tools: the host's expected keys the tuner checks candidates against (ties, -0.0,
// narrow, empty and out-of-range windows), the candidates, `tune --op mqa_topk`'s usage errors, and
// on a GPU one shape tuned with every candidate checked exactly.

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <string>

#include "codegen/variant_registry.hpp"
#include "tests/gpu_support.hpp"
#include "tests/support.hpp"
#include "tools/common/topk_problem.hpp"
#include "tools/common/topk_tuner.hpp"

using namespace mqajit;
using namespace mqajit::tools;

namespace {

HostProblem windows_only(int seq_len_kv, std::vector<std::int32_t> starts, std::vector<std::int32_t> ends) {
    HostProblem p;
    p.seq_len = static_cast<int>(starts.size());
    p.seq_len_kv = seq_len_kv;
    p.logits_row_stride = seq_len_kv;
    p.cu_starts = std::move(starts);
    p.cu_ends = std::move(ends);
    return p;
}

int tune(const std::string& arguments, std::string* output) {
    return testing::run_command(testing::cli_path().string() + " tune " + arguments, output);
}

}  // namespace

TEST_CASE("topk tools: the expected keys keep the largest logits, ties to the smaller keys, in key order") {
    const float inf = std::numeric_limits<float>::infinity();
    // Row 0: a tie at the 3rd place (keys 1, 4 and 6 hold 5.0); row 1: -0.0 ties +0.0; row 2: a
    // window of 2 keys; row 3: empty; row 4: a window reaching past both ends, clamped to [0, 8).
    const HostProblem p = windows_only(8, {0, 0, 3, 5, -4}, {8, 4, 5, 5, 20});
    std::vector<float> logits = {
        1, 5, 9, 0, 5, 2, 5, 3,       //
        -0.0f, 0.0f, -1, -inf, 7, 7, 7, 7,  //
        4, 4, 4, 1, 2, 4, 4, 4,       //
        1, 1, 1, 1, 1, 1, 1, 1,       //
        3, -inf, 8, 3, 3, 8, 0, 9,
    };
    const std::vector<std::int32_t> got = expected_topk(p, logits, 8, 3);
    const std::vector<std::int32_t> want = {
        1, 2, 4,     // 9, then the two smallest keys of the three 5.0s
        0, 1, 2,     // -0.0 and +0.0 equal: key 0 before key 1, then -1 (keys 3 = -inf is out)
        3, 4, -1,    // two keys in the window
        -1, -1, -1,  // empty
        2, 5, 7,     // 9, 8, 8
    };
    CHECK(got == want);
}

TEST_CASE("topk tools: the candidates are the baseline, the mqa_logits table's kernel and every fused kernel") {
    const TopkBenchShape shape{.heads = 32, .head_dim = 128, .seq_len = 1024, .seq_len_kv = 65536, .k = 2048};
    const std::vector<std::string> all = topk_tuning_candidates("sm_90a", 132, shape);
    REQUIRE_FALSE(all.empty());
    CHECK(all.front() == "baseline");
    const auto fused = VariantRegistry::for_op(KernelOp::mqa_topk).variants(Arch::parse("sm_90a"), 32, 128);
    REQUIRE_FALSE(fused.empty());
    for (const Variant& v : fused) CHECK(std::find(all.begin(), all.end(), v.name()) != all.end());
    CHECK(all.size() <= fused.size() + 2);  // at most one unfused variant besides the baseline
    for (const std::string& name : all) {
        if (name == "baseline" || name.starts_with("twgmma")) continue;
        CHECK(name.starts_with("wgmma"));
        CHECK(selecting_kernel(name) == name);
    }
    CHECK(selecting_kernel(fused.front().name()) == fused.front().name().substr(1));
    CHECK(selecting_kernel("baseline") == "baseline");
    const std::vector<std::string> kept =
        topk_tuning_candidates("sm_90a", 132, shape, {"baseline", fused.front().name()});
    CHECK(kept.size() == all.size() - 2);

    const std::vector<std::string> ampere = topk_tuning_candidates("sm_80", 108, shape);
    CHECK(std::none_of(ampere.begin(), ampere.end(), [](const std::string& name) { return name.starts_with("twgmma"); }));
}

TEST_CASE("topk tools: a prefill shapes file gives each shape once, with the k asked for") {
    const std::vector<BenchShape> shapes = {
        {.heads = 32, .head_dim = 128, .seq_len = 1024, .seq_len_kv = 65536, .clean_logits = 0},
        {.heads = 32, .head_dim = 128, .seq_len = 1024, .seq_len_kv = 65536, .clean_logits = 1},
        {.heads = 64, .head_dim = 128, .seq_len = 4096, .seq_len_kv = 131072}};
    const std::vector<TopkBenchShape> topk = topk_shapes(shapes, 1024);
    REQUIRE(topk.size() == 2);
    CHECK(topk[0].k == 1024);
    CHECK(topk_shape_label(topk[1]) == "H=64 D=128 S=4096 N=131072 k=1024");
}

TEST_CASE("topk tools: tune --op mqa_topk refuses what is not its own, before looking for a GPU") {
    std::string output;
    CHECK(tune("-i a.csv -o b.csv --k 100", &output) == 2);
    CHECK(output.find("--k goes with --op mqa_topk") != std::string::npos);
    CHECK(tune("--op mqa_topk -i a.csv -o b.csv --clean-logits 0", &output) == 2);
    CHECK(output.find("not for mqa_topk") != std::string::npos);
    CHECK(tune("--op mqa_topk -i a.csv -o b.csv --devices 0,1", &output) == 2);
    CHECK(output.find("one GPU per process") != std::string::npos);
    CHECK(tune("--op mqa_topk --run-config a.csv --k 8", &output) == 2);
    CHECK(tune("--op mqa_topk -i a.csv -o b.csv --k 5000", &output) == 2);
}

TEST_CASE("topk tools: bench --op mqa_topk takes its own options only, and needs a GPU") {
    const auto bench = [](const std::string& arguments, std::string* output) {
        return testing::run_command(testing::cli_path().string() + " bench " + arguments, output);
    };
    std::string output;
    CHECK(bench("--k 100", &output) == 2);
    CHECK(output.find("--k goes with --op mqa_topk") != std::string::npos);
    CHECK(bench("--op mqa_topk --variant all", &output) == 2);
    CHECK(output.find("times each path as served") != std::string::npos);
    CHECK(bench("--op mqa_topk --clean-logits 1", &output) == 2);
    std::string no_gpu;
    if (testing::test_device(&no_gpu) == nullptr) {
        CHECK(bench("--op mqa_topk --k 1024", &output) == 1);
        CHECK(output.find("bench needs a GPU") != std::string::npos);
    }
}

TEST_CASE("gpu tools: tune --op mqa_topk checks each candidate exactly, then times it") {
    MQAJIT_REQUIRE_GPU();
    const TopkBenchShape shape{.heads = 32, .head_dim = 128, .seq_len = 256, .seq_len_kv = 32768, .k = 2048};
    std::vector<std::string> candidates = topk_tuning_candidates(gpu->arch(), gpu->multiprocessor_count(), shape);
    // The baseline, the unfused path's kernel and two fused kernels: enough to cover every kind.
    std::vector<std::string> excluded;
    int fused = 0;
    for (const std::string& name : candidates)
        if (name.starts_with("twgmma") && ++fused > 2) excluded.push_back(name);
    TuneSettings settings{.timed_runs = 50, .warmup_runs = 2, .prune_factor = 0, .min_gain = 0,
                          .excluded = excluded};
    const TopkShapeResult result = tune_topk_shape(*gpu, shape, settings, [](const std::string&) {});
    REQUIRE(result.complete);
    for (const CandidateResult& c : result.candidates) {
        INFO(c.kernel << ": " << c.problem);
        CHECK(c.verified);
        CHECK(c.median_us > 0);
    }
    CHECK(result.row.key.k == 2048);
    CHECK(result.row.us > 0);
    CHECK(std::find(candidates.begin(), candidates.end(), result.row.variant) != candidates.end());
}

TEST_CASE("gpu tools: bench --op mqa_topk --check checks and times each path beside mqa_logits") {
    MQAJIT_REQUIRE_GPU();
    testing::TempDir dir("topk-bench");
    const auto shapes = dir.path() / "shapes.csv";
    {
        std::ofstream out(shapes);
        out << "seq_len,seq_len_kv,heads\n256,32768,32\n";
    }
    std::string output;
    const int code = testing::run_command(testing::cli_path().string() + " bench --op mqa_topk --check --runs 5 --shapes " +
                                              shapes.string(), &output);
    INFO(output);
    CHECK(code == 0);
    CHECK(output.find("H=32 D=128 S=256 N=32768 k=2048: logits") != std::string::npos);
    CHECK(output.find(" unfused ") != std::string::npos);
    CHECK(output.find("CHECK FAILED") == std::string::npos);
    if (gpu->arch() == "sm_90a") CHECK(output.find("(fused twgmma") != std::string::npos);
}

TEST_CASE("topk tools: db lookup --op mqa_topk also says what a call of the shape runs") {
    testing::TempDir dir("topk-lookup-cli");
    const auto csv = dir.path() / "mqa_topk_tuned.csv";
    {
        std::ofstream out(csv);
        out << "gfx,cu_num,heads,head_dim,k,seq_len,seq_len_kv,backend,variant,us\n"
               "sm_90a,132,32,128,2048,1024,8192,jit,twgmma64x128x32_bkv64_r4_w2_lds4,50\n"
               "sm_90a,132,32,128,2048,1024,65536,jit,wgmma64x128x32_bkv64_r4_w2_lds4,400\n";
    }
    const std::string db = testing::cli_path().string() + " db --db " + (dir.path() / "user.db").string() +
                           " --system-db " + (dir.path() / "none.db").string() + " ";
    std::string output;
    REQUIRE(testing::run_command(db + "import " + csv.string(), &output) == 0);
    const std::string lookup = db + "lookup --op mqa_topk --arch sm_90a --cu-num 132 --heads 32 --head-dim 128 ";
    REQUIRE(testing::run_command(lookup + "--seq-len 2048 --seq-len-kv 16384", &output) == 0);
    CHECK(output.find("a call runs: fused twgmma64x128x32_bkv64_r4_w2_lds4 (the fused path: mqa_topk row") !=
          std::string::npos);
    REQUIRE(testing::run_command(lookup + "--seq-len 2048 --seq-len-kv 100000", &output) == 0);
    CHECK(output.find("a call runs: wgmma64x128x32_bkv64_r4_w2_lds4 (the unfused path: mqa_topk row") !=
          std::string::npos);
    CHECK(testing::run_command(lookup + "--seq-len 2048 --seq-len-kv 100000 --clean-logits 0", &output) == 2);
}
