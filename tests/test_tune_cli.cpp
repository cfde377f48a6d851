// `mqajit tune` without a GPU: usage errors, the one-line no-GPU refusal, and the shape files it reads.

#include <doctest/doctest.h>

#include <string>

#include "runtime/backend.hpp"
#include "tests/support.hpp"
#include "tests/error_kind.hpp"
#include "tools/common/shapes.hpp"
#include "tools/common/tuner.hpp"

using namespace mqajit;

namespace {

int tune(const std::string& arguments, std::string* output) {
    return testing::run_command(testing::cli_path().string() + " tune " + arguments, output);
}

const std::string kUntunedGlm5 = std::string(MQAJIT_SOURCE_DIR) + "/tuning_db/configs/model_configs/glm5_untuned_mqa_logits.csv";

}  // namespace

TEST_CASE("tune cli: bad usage exits 2 and says what to give") {
    std::string output;
    CHECK(tune("", &output) == 2);
    CHECK(output.find("either -i untuned.csv -o tuned.csv, or --run-config") != std::string::npos);
    CHECK(tune("-i " + kUntunedGlm5, &output) == 2);
    CHECK(output.find("needs both") != std::string::npos);
    CHECK(tune("-i a.csv -o b.csv --run-config c.csv", &output) == 2);
    CHECK(tune("-i a.csv -o b.csv --runs 10", &output) == 2);  // fewer than 50 timed runs
    CHECK(tune("-i a.csv -o b.csv --prune-factor 0.9", &output) == 2);  // would prune the best itself
    CHECK(tune("-i a.csv -o b.csv --prune-factor x", &output) == 2);
    CHECK(tune("--run-config c.csv --json-file t.json", &output) == 2);
    CHECK(output.find("--json-file goes with -i") != std::string::npos);
}

TEST_CASE("tune: --exclude leaves the named candidates out, and refuses names that are no candidate's") {
    const tools::BenchShape shape{.heads = 32, .head_dim = 128, .seq_len = 2048, .seq_len_kv = 8192};
    const std::vector<std::string> all = tools::tuning_candidates("sm_90a", shape);
    REQUIRE(all.size() > 3);
    CHECK(all.front() == "baseline");
    const std::string hung = all[1], faulted = all[2];
    const std::vector<std::string> kept = tools::tuning_candidates("sm_90a", shape, {hung, faulted, "baseline"});
    CHECK(kept.size() == all.size() - 3);
    for (const std::string& name : {hung, faulted, std::string("baseline")})
        CHECK(std::find(kept.begin(), kept.end(), name) == kept.end());
    CHECK(std::equal(kept.begin(), kept.end(), all.begin() + 3));
    // A variant of another arch is a valid name that leaves nothing out here.
    CHECK(tools::tuning_candidates("sm_90a", shape, {"mfma32x32x64_bkv64_r1_w2_lds2"}) == all);

    tools::check_excluded_names({hung, "baseline"});
    CHECK(testing::error_kind_of([] { tools::check_excluded_names({"wgmma_oops"}); }) == ErrorKind::invalid_argument);
    std::string output;
    CHECK(tune("-i a.csv -o b.csv --exclude " + hung + ",wgmma_oops", &output) == 2);
    CHECK(output.find("--exclude wgmma_oops: not baseline nor a variant name") != std::string::npos);
    CHECK(tune("-i a.csv -o b.csv --candidate-timeout -1", &output) == 2);
}

TEST_CASE("tune cli: without a GPU it refuses in one line and writes nothing") {
    if (live_driver_status().available) MQAJIT_SKIP("a GPU is present: the no-GPU refusal is not exercised here");
    testing::TempDir dir("tune");
    const auto out = dir.path() / "tuned.csv";
    std::string output;
    const auto json = dir.path() / "tune.json";
    CHECK(tune("-i " + kUntunedGlm5 + " -o " + out.string() + " --json-file " + json.string() + " --prune-factor 2",
               &output) == 1);
    CHECK(output.find("tuning needs a GPU") != std::string::npos);
    CHECK(!std::filesystem::exists(out));
    CHECK(!std::filesystem::exists(json));
    CHECK(tune("-i " + kUntunedGlm5 + " -o " + out.string() + " --no-prune", &output) == 1);
    CHECK(tune("-i " + kUntunedGlm5 + " -o " + out.string() + " --exclude baseline --candidate-timeout 5", &output) == 1);
    CHECK(output.find("excluded by the user (--exclude): baseline\n") != std::string::npos);
    CHECK(output.find("tuning needs a GPU") != std::string::npos);
    CHECK(tune("--run-config " + kUntunedGlm5, &output) == 1);
}

TEST_CASE("tune: the shipped untuned files name the 24 GLM-5 and 21 DeepSeek-V3.2 shapes for sm_90a in both modes") {
    const std::string configs = std::string(MQAJIT_SOURCE_DIR) + "/tuning_db/configs/model_configs/";
    const std::pair<std::string, std::vector<tools::BenchShape>> files[] = {
        {configs + "glm5_untuned_mqa_logits.csv", tools::glm5_shapes()},
        {configs + "deepseek_v32_untuned_mqa_logits.csv", tools::deepseek_v32_shapes()}};
    for (const auto& [file, listed] : files) {
        CAPTURE(file);
        const auto shapes = tools::read_shapes_csv(file);
        REQUIRE(shapes.size() == 2 * listed.size());
        for (const int mode : {0, 1}) {
            // tune --clean-logits M picks the rows of mode M: the list's shapes, in its order.
            const auto picked = tools::in_modes(shapes, std::vector<int>{mode});
            REQUIRE(picked.size() == listed.size());
            for (std::size_t i = 0; i < listed.size(); ++i) {
                CHECK(picked[i].arch == "sm_90a");
                CHECK(picked[i].cu_num == 132);
                CHECK(picked[i].clean_logits == mode);
                CHECK(picked[i].heads == listed[i].heads);
                CHECK(picked[i].head_dim == listed[i].head_dim);
                CHECK(picked[i].seq_len == listed[i].seq_len);
                CHECK(picked[i].seq_len_kv == listed[i].seq_len_kv);
            }
        }
        CHECK(tools::in_modes(shapes, std::nullopt).size() == shapes.size());  // no --clean-logits: both
    }
}
