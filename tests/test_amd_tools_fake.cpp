// The seed's loop on AMD, end to end: `mqajit tune`, `tune --run-config`, `bench --check` and
// `demo` (and the decode op's tune, --run-config and bench) on a fake MI355X, the stand-in ROCm libraries of tests/fake_hip/ found by their real
// names. The fake runtime computes every mqa_logits launch on the CPU, so these tests prove the
// tools' control flow on the HIP backend (mfma candidates, the reference kernel from the AMD code
// object, the CSV and JSON written, a wrong kernel rejected, the refusals), not any AMD kernel.

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/prebuilt_amd.hpp"
#include "runtime/backend.hpp"
#include "tests/hip_fakes.hpp"
#include "tests/support.hpp"
#include "tools/common/paged_tuner.hpp"
#include "tools/common/tuner.hpp"

using namespace mqajit;

namespace {

constexpr const char* kMi355x = "'AMD Instinct MI355X;gfx950:sramecc+:xnack-;256;163840'";

std::string read_file(const std::filesystem::path& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The CLI on a fake MI355X whose launches compute on the CPU; `environment` adds VAR=value pairs.
class FakeMi355x {
public:
    FakeMi355x() : rocm_(/*with_hiprtc=*/true) {}
    const std::filesystem::path& dir() const { return rocm_.dir(); }

    int mqajit(const std::string& arguments, std::string* output, const std::string& environment = "") const {
        const int code = rocm_.run(fmt::format("MQAJIT_FAKE_HIP_DEVICE={} MQAJIT_FAKE_HIP_COMPUTE=1 MQAJIT_TUNING_DB={} "
                                               "{} {} {}",
                                               kMi355x, (dir() / "user.db").string(), environment,
                                               testing::cli_path().string(), arguments),
                                   output);
        INFO(*output);
        return code;
    }

    std::filesystem::path write(const std::string& name, const std::string& text) const {
        std::ofstream(dir() / name) << text;
        return dir() / name;
    }

private:
    testing::FakeRocmInstall rocm_;
};

// Skips where the CLI would not reach the fake: a real GPU answers first, or this build has no AMD
// reference kernel (no clang-22 when it was built), which the checks need.
#define MQAJIT_REQUIRE_FAKE_AMD_MACHINE()                                                                      \
    if (live_driver_status().available) MQAJIT_SKIP("a real GPU is present, so the CLI would not use the fake"); \
    if (prebuilt_amd_archs().empty()) MQAJIT_SKIP("this build has no AMD reference kernel (no clang-22 at build time)")

const tools::BenchShape kShape{.heads = 32, .head_dim = 128, .seq_len = 4, .seq_len_kv = 64};

}  // namespace

TEST_CASE("amd tools (fake MI355X): tune verifies mfma candidates, rejects a wrong one, writes the CSV and JSON, "
          "and --run-config re-checks the table") {
    MQAJIT_REQUIRE_FAKE_AMD_MACHINE();
    const FakeMi355x machine;
    // The candidates are every gfx950 variant; three and the baseline keep the run short.
    const std::vector<std::string> all = tools::tuning_candidates("gfx950", kShape);
    REQUIRE(all.size() > 40);
    REQUIRE(std::all_of(all.begin() + 1, all.end(), [](const std::string& c) { return c.starts_with("mfma"); }));
    const std::vector<std::string> kept = {all[0], all[1], all[2], all[3]};
    const std::string wrong = all[3];
    std::vector<std::string> excluded(all.begin() + 4, all.end());
    const auto untuned = machine.write("untuned.csv", "seq_len,seq_len_kv,heads,head_dim\n4,64,32,128\n8,128,32,128\n");
    const auto tuned = machine.dir() / "tuned.csv";
    const auto json = machine.dir() / "tune.json";

    std::string output;
    const int code = machine.mqajit(fmt::format("tune -i {} -o {} --json-file {} --exclude {}", untuned.string(),
                                                tuned.string(), json.string(), fmt::join(excluded, ",")),
                                    &output, "MQAJIT_FAKE_HIP_WRONG_KERNEL=" + wrong);
    INFO(output);
    REQUIRE(code == 0);
    CHECK(contains(output, wrong + ": REJECTED, not timed"));
    // Progress per candidate over both shapes (baseline and three each), and a line per shape.
    CHECK(contains(output, "[8/8]"));
    CHECK(contains(output, "shape 2/2"));

    const std::string table = read_file(tuned);
    INFO(table);
    int rows = 0;
    std::istringstream lines(table);
    for (std::string line; std::getline(lines, line);) {
        if (!line.starts_with("gfx950,256,32,128,")) continue;
        ++rows;
        CHECK_FALSE(contains(line, wrong));
        CHECK(std::any_of(kept.begin(), kept.begin() + 3, [&](const std::string& k) { return contains(line, k); }));
    }
    CHECK(rows == 2);

    const nlohmann::json written = nlohmann::json::parse(read_file(json));
    REQUIRE(written.is_array());
    REQUIRE(written.size() == 2);
    for (const nlohmann::json& row : written) {
        CHECK(row["arch"] == "gfx950");
        CHECK(row["cu_num"] == 256);
        REQUIRE(row["candidates"].size() == 4);
        const auto rejected = std::count_if(row["candidates"].begin(), row["candidates"].end(),
                                            [](const nlohmann::json& c) { return !c["verified"].get<bool>(); });
        CHECK(rejected == 1);
    }

    CHECK(machine.mqajit("tune --run-config " + tuned.string(), &output) == 0);
    CHECK(contains(output, "2 row(s) for gfx950 with 256 SMs checked, 0 problem(s)"));
    // A table whose kernel now computes wrong results fails the re-check.
    const std::string chosen = nlohmann::json::parse(read_file(json))[0]["kernel"];
    CHECK(machine.mqajit("tune --run-config " + tuned.string(), &output,
                         "MQAJIT_FAKE_HIP_WRONG_KERNEL=" + (chosen == "baseline" ? std::string("baseline") : chosen)) == 1);
    CHECK(contains(output, "CHECK FAILED"));
}

TEST_CASE("amd tools (fake MI355X): bench --check times the tuned choice and every candidate against the baseline") {
    MQAJIT_REQUIRE_FAKE_AMD_MACHINE();
    const FakeMi355x machine;
    const auto shapes = machine.write("shapes.csv", "seq_len,seq_len_kv,heads,head_dim\n4,64,32,128\n");
    std::string output;
    REQUIRE(machine.mqajit("bench --shapes " + shapes.string() + " --runs 3 --warmup 0 --check --json", &output) == 0);
    const nlohmann::json rows = nlohmann::json::parse(output.substr(output.find('[')));
    REQUIRE(rows.size() == 1);
    CHECK(rows[0]["arch"] == "gfx950");
    CHECK(rows[0]["cu_num"] == 256);
    CHECK(rows[0]["checked"] == true);
    CHECK(rows[0]["check_failed"] == false);
    CHECK(rows[0]["baseline_us"].get<double>() > 0);

    REQUIRE(machine.mqajit("bench --shapes " + shapes.string() + " --variant all --runs 3 --warmup 0 --json", &output) == 0);
    const nlohmann::json all = nlohmann::json::parse(output.substr(output.find('[')));
    CHECK(all[0]["variants_us"].size() > 40);
    CHECK(std::string(all[0]["kernel"]).starts_with("mfma"));

    CHECK(machine.mqajit("bench --shapes " + shapes.string() + " --runs 3 --warmup 0 --check", &output,
                         "MQAJIT_FAKE_HIP_WRONG_KERNEL=mqa_logits_baseline") == 1);
    CHECK(contains(output, "CHECK FAILED"));
}

TEST_CASE("amd tools (fake MI355X): demo checks against the AMD reference kernel, and without a device the tools refuse") {
    MQAJIT_REQUIRE_FAKE_AMD_MACHINE();
    const FakeMi355x machine;
    std::string output;
    CHECK(machine.mqajit("demo --seq-len 4 --seq-len-kv 64", &output) == 0);
    CHECK(contains(output, "device: AMD Instinct MI355X (gfx950:sramecc+:xnack-, 256 SMs"));
    CHECK(contains(output, "-> PASS"));

    // The fake with no device: every GPU tool says why in one line.
    const testing::FakeRocmInstall empty(/*with_hiprtc=*/true);
    const std::string cli = testing::cli_path().string();
    CHECK(empty.run(cli + " tune -i x.csv -o y.csv", &output) == 1);
    CHECK(contains(output, "tuning needs a GPU: no GPU: "));
    CHECK(contains(output, "HIP runtime found"));
    CHECK(empty.run(cli + " bench --shapes glm5", &output) == 1);
    CHECK(contains(output, "bench needs a GPU: no GPU: "));
}

// Two decode shapes: contexts off a block and a request's blocks spanning CTAs, next_n 1 and 2.
constexpr const char* kDecodeShapes = "batch,next_n,heads,head_dim,block_kv,clean_logits,context_len\n"
                                      "2,1,32,128,64,0,64;130\n"
                                      "3,2,32,128,64,0,100\n";

TEST_CASE("amd tools (fake MI355X): tune --op paged_mqa_logits verifies pmfma candidates, rejects a wrong one, and "
          "writes a decode table that db check, db import and --run-config take") {
    MQAJIT_REQUIRE_FAKE_AMD_MACHINE();
    const FakeMi355x machine;
    const tools::PagedBenchShape first{.batch = 2, .next_n = 1, .heads = 32, .contexts = {64, 130}};
    const tools::PagedBenchShape second{.batch = 3, .next_n = 2, .heads = 32, .contexts = {100}};
    // At most three variants of each shape and the baseline keep the run short; the third of the first is wrong.
    std::vector<std::string> excluded, kept;
    for (const auto* shape : {&first, &second}) {
        const std::vector<std::string> all = tools::paged_tuning_candidates("gfx950", *shape);
        REQUIRE(all.size() >= 4);
        REQUIRE(std::all_of(all.begin() + 1, all.end(), [](const std::string& c) { return c.starts_with("pmfma"); }));
        kept.insert(kept.end(), all.begin() + 1, all.begin() + 4);
        excluded.insert(excluded.end(), all.begin() + 4, all.end());
    }
    const std::string wrong = kept[2];
    const auto untuned = machine.write("paged_untuned.csv", kDecodeShapes);
    const auto tuned = machine.dir() / "paged_mqa_logits_tuned_fake.csv";
    const auto json = machine.dir() / "paged_tune.json";

    std::string output;
    const std::string exclude = excluded.empty() ? "" : fmt::format(" --exclude {}", fmt::join(excluded, ","));
    const int code = machine.mqajit(fmt::format("tune --op paged_mqa_logits -i {} -o {} --json-file {}{}",
                                                untuned.string(), tuned.string(), json.string(), exclude),
                                    &output, "MQAJIT_FAKE_HIP_WRONG_KERNEL=" + wrong);
    INFO(output);
    REQUIRE(code == 0);
    CHECK(contains(output, wrong + ": REJECTED, not timed"));
    CHECK(contains(output, "[8/8]"));  // per candidate: the baseline and three, at each shape
    CHECK(contains(output, "shape 2/2 B=3 next_n=2 H=32 D=128 block_kv=64 clean_logits=0 contexts=100"));

    const std::string table = read_file(tuned);
    INFO(table);
    CHECK(table.starts_with("gfx,cu_num,next_n,heads,head_dim,block_kv,clean_logits,batch,backend,variant,us,"));
    CHECK(contains(table, "\ngfx950,256,1,32,128,64,0,2,"));
    CHECK(contains(table, "\ngfx950,256,2,32,128,64,0,3,"));
    CHECK_FALSE(contains(table, wrong));
    const nlohmann::json rows = nlohmann::json::parse(read_file(json));
    REQUIRE(rows.size() == 2);
    CHECK(rows[0]["op"] == "paged_mqa_logits");
    CHECK(rows[0]["contexts"] == nlohmann::json::array({64, 130}));
    CHECK(rows[0]["candidates"].size() == 4);
    for (const nlohmann::json& c : rows[0]["candidates"])
        CHECK((c["verified"] == false || c["context_us"].size() == 2));

    CHECK(machine.mqajit("db check --op paged_mqa_logits " + tuned.string(), &output) == 0);
    CHECK(machine.mqajit("db --db " + (machine.dir() / "other.db").string() + " import " + tuned.string(), &output) == 0);
    CHECK(machine.mqajit("tune --op paged_mqa_logits --run-config " + tuned.string() + " --context-len 64,100", &output) ==
          0);
    CHECK(contains(output, "2 row(s) for gfx950 with 256 SMs checked, 0 problem(s)"));
    const std::string chosen = rows[0]["kernel"];
    // NOTES: short contexts here too: the fake runtime computes on the CPU, and the table's own
    // (up to 131072) take minutes on a busy machine, past the tuner's candidate watchdog.
    CHECK(machine.mqajit("tune --op paged_mqa_logits --run-config " + tuned.string() + " --context-len 64,100", &output,
                         "MQAJIT_FAKE_HIP_WRONG_KERNEL=" + chosen) == 1);
    CHECK(contains(output, "CHECK FAILED"));
}

TEST_CASE("amd tools (fake MI355X): bench --op paged_mqa_logits checks each kernel first and never times one that "
          "fails") {
    MQAJIT_REQUIRE_FAKE_AMD_MACHINE();
    const FakeMi355x machine;
    const std::string flags = "bench --op paged_mqa_logits --batch 2 --next-n 2 --heads 32 --context-len 64,130 "
                              "--runs 3 --warmup 0 --check";
    std::string output;
    REQUIRE(machine.mqajit(flags + " --json", &output) == 0);
    const nlohmann::json rows = nlohmann::json::parse(output.substr(output.find("[\n")));
    REQUIRE(rows.size() == 2);  // one per context
    CHECK(rows[1]["context_len"] == 130);
    CHECK(rows[0]["kernel"] == "baseline");  // no tuned row
    CHECK(rows[0]["checked"] == true);
    CHECK(rows[0]["check_failed"] == false);
    CHECK(rows[0]["us"].get<double>() > 0);
    CHECK(rows[0]["floor_bytes"].get<double>() > 0);

    REQUIRE(machine.mqajit(flags + " --variant all --json", &output) == 0);
    const nlohmann::json all = nlohmann::json::parse(output.substr(output.find("[\n")));
    const auto candidates = tools::paged_tuning_candidates(
        "gfx950", tools::PagedBenchShape{.batch = 2, .next_n = 2, .heads = 32, .contexts = {64}});
    CHECK(all[0]["variants_us"].size() == candidates.size() - 1);
    CHECK(std::string(all[0]["kernel"]).starts_with("pmfma"));

    // A baseline that computes wrong results is reported and not timed.
    CHECK(machine.mqajit(flags, &output, "MQAJIT_FAKE_HIP_WRONG_KERNEL=baseline") == 1);
    CHECK(contains(output, "CHECK FAILED baseline"));
    CHECK(machine.mqajit(flags + " --variant " + candidates[1], &output) == 0);
}

