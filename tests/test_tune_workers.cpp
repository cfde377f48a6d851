// `mqajit tune --devices 0,1,...` without a GPU: the device list, the split of the shapes, the
// worker's shape file, the merge of the workers' CSVs, worker processes (their exit codes, their
// last error, the environment they get, their lines as they come, an interrupt passed on), and
// the whole command with workers that fail cleanly (no GPU here, or a table for another arch) and
// change no byte of the output.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "tests/error_kind.hpp"
#include "tests/support.hpp"
#include "tools/common/tune_output_csv.hpp"
#include "tools/common/tune_workers_plan.hpp"
#include "tools/common/tune_workers_spawn.hpp"
#include "tuning_db/csv.hpp"

using namespace mqajit;

namespace {

TunedRow row(std::int64_t seq_len, std::int64_t seq_len_kv, const std::string& variant, double us) {
    return TunedRow{.key = {.arch = "sm_90a", .cu_num = 132, .heads = 32, .head_dim = 128, .seq_len = seq_len,
                            .seq_len_kv = seq_len_kv},
                    .backend = "jit", .variant = variant, .us = us};
}

constexpr const char* kVariant = "wgmma64x128x32_bkv64_r4_w4_lds4";

// NOTES: prints a line, then waits for the parent to have seen it: with stdout block-buffered
// into the pipe, the line would stay in this process until it exits.
MQAJIT_TEST_CHILD("tune-line-buffered", [](const std::vector<std::string>& args) {
    tools::line_buffer_output();
    std::printf("first\n");
    const std::filesystem::path seen = args.at(0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!std::filesystem::exists(seen) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::printf("%s\n", std::filesystem::exists(seen) ? "second" : "the parent never saw the first line");
    return 0;
});

}  // namespace

TEST_CASE("tune workers: --devices lists distinct GPU ordinals") {
    CHECK(tools::parse_device_list("0") == std::vector<int>{0});
    CHECK(tools::parse_device_list("0,1,3") == std::vector<int>{0, 1, 3});
    CHECK(tools::parse_device_list(" 2 , 5") == std::vector<int>{2, 5});
    for (const char* bad : {"", "0,,1", "a", "1x", "-1", "1,1", "0,"}) {
        CAPTURE(bad);
        CHECK(testing::error_kind_of([&] { tools::parse_device_list(bad); }) == ErrorKind::invalid_argument);
    }
}

TEST_CASE("tune workers: round robin gives every shape to exactly one worker") {
    std::vector<tools::BenchShape> shapes;
    for (int i = 1; i <= 10; ++i) shapes.push_back({.seq_len = i, .seq_len_kv = 100 * i});
    const auto parts = tools::split_round_robin(shapes, 3);
    REQUIRE(parts.size() == 3);
    CHECK(parts[0].size() == 4);
    CHECK(parts[1].size() == 3);
    CHECK(parts[2].size() == 3);
    CHECK(parts[1][0].seq_len == 2);
    CHECK(parts[1][1].seq_len == 5);
    std::multiset<int> seen;
    for (const auto& part : parts)
        for (const auto& s : part) seen.insert(s.seq_len);
    CHECK(seen.size() == 10);
    for (int i = 1; i <= 10; ++i) CHECK(seen.count(i) == 1);

    const auto sparse = tools::split_round_robin({shapes[0]}, 4);
    CHECK(sparse[0].size() == 1);
    CHECK(sparse[3].empty());
}

TEST_CASE("tune workers: a worker's shape file reads back as the shapes it was given") {
    testing::TempDir dir("tune-workers");
    const std::vector<tools::BenchShape> shapes = {
        {.heads = 64, .head_dim = 128, .seq_len = 256, .seq_len_kv = 4096, .arch = "sm_90a", .cu_num = 132},
        {.heads = 32, .head_dim = 64, .seq_len = 1024, .seq_len_kv = 60000}};
    tools::write_shapes_csv(dir.path() / "part.csv", shapes);
    const auto back = tools::read_shapes_csv(dir.path() / "part.csv");
    REQUIRE(back.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
        CHECK(back[i].heads == shapes[i].heads);
        CHECK(back[i].head_dim == shapes[i].head_dim);
        CHECK(back[i].seq_len == shapes[i].seq_len);
        CHECK(back[i].seq_len_kv == shapes[i].seq_len_kv);
        CHECK(back[i].arch == shapes[i].arch);
        CHECK(back[i].cu_num == shapes[i].cu_num);
    }
}

TEST_CASE("tune workers: a retuned row beats the stale copy another worker started from") {
    // Both workers started from the old output (S=256 at 10 us); worker 1 retuned S=256 (--force),
    // worker 0 tuned S=1024. Each worker's CSV keeps the copies it started from.
    const std::vector<tools::BenchShape> shapes = {{.seq_len = 256, .seq_len_kv = 4096},
                                                   {.seq_len = 1024, .seq_len_kv = 4096}};
    const auto parts = tools::split_round_robin({shapes[1], shapes[0]}, 2);  // worker 0: 1024, worker 1: 256
    const std::vector<TunedRow> worker0 = {row(256, 4096, kVariant, 10), row(1024, 4096, kVariant, 30)};
    const std::vector<TunedRow> worker1 = {row(256, 4096, kVariant, 9)};
    std::vector<TunedRow> finished = tools::rows_for_shapes(worker0, parts[0]);
    REQUIRE(finished.size() == 1);
    CHECK(finished[0].key.seq_len == 1024);
    const auto own1 = tools::rows_for_shapes(worker1, parts[1]);
    finished.insert(finished.end(), own1.begin(), own1.end());

    const std::vector<TunedRow> in_input_order = tools::rows_for_shapes(finished, shapes);
    REQUIRE(in_input_order.size() == 2);
    CHECK(in_input_order[0].key.seq_len == 256);
    CHECK(in_input_order[1].key.seq_len == 1024);
    tools::TuneOutputCsv output;
    output.upsert(row(256, 4096, kVariant, 10));
    for (const TunedRow& r : in_input_order) output.upsert(r);
    const std::vector<TunedRow> merged = output.rows();
    REQUIRE(merged.size() == 2);
    CHECK(merged[0].us == 9);
    CHECK(merged[1].us == 30);

    // A shape that names its arch and cu_num takes only rows of that arch and cu_num.
    const std::vector<tools::BenchShape> gfx = {{.seq_len = 256, .seq_len_kv = 4096, .arch = "gfx950", .cu_num = 256}};
    CHECK(tools::rows_for_shapes(worker0, gfx).empty());
    const std::vector<tools::BenchShape> sm90 = {{.seq_len = 256, .seq_len_kv = 4096, .arch = "sm90a", .cu_num = 132}};
    CHECK(tools::rows_for_shapes(worker0, sm90).size() == 1);
}

TEST_CASE("tune workers: each worker sees only its GPU, counted within an inherited CUDA_VISIBLE_DEVICES") {
    CHECK(tools::worker_visible_devices(2, std::nullopt) == "2");
    CHECK(tools::worker_visible_devices(1, "4,5,6") == "5");
    CHECK(tools::worker_visible_devices(0, "GPU-8a1f,GPU-77c2") == "GPU-8a1f");
    CHECK(testing::error_kind_of([] { tools::worker_visible_devices(2, "4,5"); }) == ErrorKind::invalid_argument);
    CHECK(testing::error_kind_of([] { tools::worker_visible_devices(0, ""); }) == ErrorKind::invalid_argument);
}

TEST_CASE("tune workers: worker processes report their exit codes, last error and environment") {
    const std::vector<tools::WorkerSpec> specs = {
        {.label = "w0", .argv = {"/bin/sh", "-c", "echo working; echo 'mqajit: tuning needs a GPU' >&2; echo bye; exit 3"}},
        {.label = "w1", .argv = {"/bin/sh", "-c", "printf 'no newline %s' \"$CUDA_VISIBLE_DEVICES\""},
         .environment = {{"CUDA_VISIBLE_DEVICES", "7"}}},
        {.label = "w2", .argv = {"/bin/sh", "-c", "kill -9 $$"}}};
    const tools::WorkersResult result = tools::run_workers(specs);
    CHECK(!result.interrupted);
    REQUIRE(result.outcomes.size() == 3);
    CHECK(result.outcomes[0].label == "w0");
    CHECK(result.outcomes[0].exit_code == 3);
    CHECK(result.outcomes[0].last_error == "mqajit: tuning needs a GPU");
    CHECK(result.outcomes[1].exit_code == 0);
    CHECK(result.outcomes[1].last_error == "no newline 7");
    CHECK(result.outcomes[2].exit_code == 128 + 9);

    CHECK(testing::error_kind_of([] {
              tools::run_workers({{.label = "x", .argv = {"/nonexistent/mqajit-worker"}}});
          }) == ErrorKind::io);
    CHECK(tools::self_executable().find("mqajit_tests") != std::string::npos);
}

TEST_CASE("tune workers: a worker's lines reach the parent one by one, in order, as they are printed") {
    testing::TempDir dir("tune-lines");
    const auto seen = dir.path() / "seen-first";
    std::vector<std::string> lines;
    const tools::WorkersResult result = tools::run_workers(
        {{.label = "w0", .argv = {tools::self_executable(), "--mqajit-child=tune-line-buffered", seen.string()}}},
        [&](const std::string& label, const std::string& line) {
            CHECK(label == "w0");
            lines.push_back(line);
            if (line == "first") std::ofstream(seen) << "yes";
        });
    REQUIRE(result.outcomes.size() == 1);
    CHECK(result.outcomes[0].exit_code == 0);
    CHECK(lines == std::vector<std::string>{"first", "second"});
}

TEST_CASE("tune workers: an interrupt to the parent reaches every worker") {
    testing::TempDir dir("tune-interrupt");
    std::vector<tools::WorkerSpec> specs;
    for (int i = 0; i < 2; ++i) {
        const std::string ready = (dir.path() / fmt::format("ready{}", i)).string();
        specs.push_back({.label = fmt::format("w{}", i),
                         .argv = {"/bin/sh", "-c",
                                  "trap 'echo stopping; exit 7' INT; touch " + ready + "; while :; do sleep 0.05; done"}});
    }
    // NOTES: the signal goes out only once both workers are up, so run_workers' handler is in place.
    std::thread interrupter([&] {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (!(std::filesystem::exists(dir.path() / "ready0") && std::filesystem::exists(dir.path() / "ready1")) &&
               std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ::kill(::getpid(), SIGINT);
    });
    const tools::WorkersResult result = tools::run_workers(specs);
    interrupter.join();
    CHECK(result.interrupted);
    REQUIRE(result.outcomes.size() == 2);
    for (const auto& outcome : result.outcomes) {
        CHECK(outcome.exit_code == 7);
        CHECK(outcome.last_error == "stopping");
    }
}

TEST_CASE("tune cli --devices: workers that fail are reported, exit 1, and no row of the output is lost") {
    testing::TempDir dir("tune-devices");
    // NOTES: a gfx950 table fails in every worker on any machine: with no GPU ("tuning needs a GPU"),
    // or on an NVIDIA GPU (the arch check), so this runs the real spawn-and-merge path everywhere.
    const auto input = dir.path() / "untuned.csv";
    tools::write_shapes_csv(input, {{.seq_len = 256, .seq_len_kv = 4096, .arch = "gfx950", .cu_num = 256},
                                    {.seq_len = 1024, .seq_len_kv = 4096, .arch = "gfx950", .cu_num = 256},
                                    {.seq_len = 2048, .seq_len_kv = 4096, .arch = "gfx950", .cu_num = 256}});
    const auto output = dir.path() / "tuned.csv";
    // NOTES: a named key, not a nested temporary, which GCC 12 at -O3 falsely warns may be uninitialized.
    const ShapeKey gfx950_key{.arch = "gfx950", .cu_num = 256, .heads = 32, .head_dim = 128, .seq_len = 2048,
                              .seq_len_kv = 4096};
    const std::vector<TunedRow> before = {row(256, 8192, kVariant, 42), row(512, 8192, kVariant, 50),
                                          TunedRow{.key = gfx950_key, .backend = "jit",
                                                   .variant = "mfma32x32x64_bkv128_r2_w4_lds3", .us = 56}};
    const std::string output_before = tuning::csv_header() + "\n" + tuning::csv_line(before[0]) + "\n" +
                                      tuning::csv_line(before[1]) + "\n" +
                                      "gfx950,256,32,128,0,float32,2048,4096,flydsl,mfma32x32x64_bkv128_r2_w4_lds3,56.0,,,,,,\n";
    std::ofstream(output, std::ios::binary) << output_before;
    const auto db = dir.path() / "user.db";
    const auto json = dir.path() / "tune.json";
    const std::string json_before = R"([{"heads": 32, "seq_len": 256, "seq_len_kv": 8192}])";
    std::ofstream(json) << json_before;
    const std::string command = testing::cli_path().string() + " tune -i " + input.string() + " -o " +
                                output.string() + " --db " + db.string() + " --json-file " + json.string();

    std::string text;
    CHECK(testing::run_command(command + " --devices 0,1", &text) == 1);
    CAPTURE(text);
    CHECK(text.find("with 2 worker(s)") != std::string::npos);
    for (const char* gpu : {"GPU 0", "GPU 1"}) {
        CHECK(text.find(fmt::format("[{}] mqajit: ", gpu)) != std::string::npos);
        CHECK(text.find(fmt::format("{}: worker FAILED (exit ", gpu)) != std::string::npos);
    }
    CHECK((text.find("tuning needs a GPU") != std::string::npos || text.find("asks for arch gfx950") != std::string::npos));
    CHECK(text.find("2 of 2 worker(s) failed") != std::string::npos);
    CHECK(text.find("no worker wrote a JSON row") != std::string::npos);
    std::stringstream json_after;
    json_after << std::ifstream(json).rdbuf();
    CHECK(json_after.str() == json_before);  // the JSON file's rows are not lost either

    std::stringstream output_after;
    output_after << std::ifstream(output, std::ios::binary).rdbuf();
    CHECK(output_after.str() == output_before);  // every row kept, byte for byte
    const tuning::CsvRows after = tuning::read_csv_file(output);
    REQUIRE(after.rows.size() == before.size());
    for (std::size_t i = 0; i < before.size(); ++i) {
        CHECK(after.rows[i].key == before[i].key);
        CHECK(after.rows[i].us == before[i].us);
    }
    std::size_t leftovers = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
        leftovers += entry.path().filename().string().find(".workers-") != std::string::npos;
    CHECK(leftovers == 0);

    // No output yet: none is made when no worker tuned anything.
    std::filesystem::remove(output);
    CHECK(testing::run_command(command + " --devices 3", &text) == 1);
    CHECK(text.find("GPU 3: worker FAILED") != std::string::npos);
    CHECK(!std::filesystem::exists(output));

    CHECK(testing::run_command(command + " --devices 0,0", &text) == 2);
    CHECK(text.find("names GPU 0 twice") != std::string::npos);
}
