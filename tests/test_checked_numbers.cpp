// Numbers are parsed checked wherever they enter: a value that does not fit its field is an error
// that names where it came from, never truncated, wrapped or saturated; a non-finite real is refused.

#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "mqajit/error.hpp"
#include "tests/error_kind.hpp"
#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tools/common/report_data.hpp"
#include "tools/common/shapes.hpp"
#include "tuning_db/csv.hpp"

using namespace mqajit;
using namespace mqajit::testing;

namespace {

std::string message_of(const std::function<void()>& work) {
    try {
        work();
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

std::string quoted(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

}  // namespace

TEST_CASE("checked numbers: the shapes file refuses a value its field cannot hold, naming file:line") {
    TempDir dir("shapes-wrap");
    const std::filesystem::path file = dir.path() / "shapes.csv";
    for (const char* line : {"4294967297,4096", "1024,99999999999999999999", "-1,4096", "2147483648,4096"}) {
        CAPTURE(line);
        write_text(file, std::string("seq_len,seq_len_kv\n256,4096\n") + line + "\n");
        const std::string message = message_of([&] { tools::read_shapes_csv(file); });
        CHECK(message.find(file.string() + ":3") != std::string::npos);
    }
    write_text(file, "seq_len,seq_len_kv,heads\n256,4096,4294967328\n");
    CHECK(message_of([&] { tools::read_shapes_csv(file); }).find("out of range") != std::string::npos);
    write_text(file, "seq_len,seq_len_kv\n256,4096\n2147483647,4096\n");
    CHECK(tools::read_shapes_csv(file).at(1).seq_len == 2147483647);
}

TEST_CASE("checked numbers: a tuning CSV field out of its range says so") {
    const auto parsed = tuning::parse_csv(std::string(kCsvHeader) +
                                              "gfx950,4294967552,32,128,256,4096,flydsl,mfma32x32x64_bkv64_r1_w2_lds2,1\n"
                                              "gfx950,256,32,128,256,4096,flydsl,mfma32x32x64_bkv64_r1_w2_lds2,nan\n",
                                          "range.csv");
    CHECK(parsed.rows.empty());
    REQUIRE(parsed.problems.size() == 2);
    CHECK(parsed.problems[0].message.find("cu_num '4294967552' is out of range") != std::string::npos);
    CHECK(parsed.problems[1].place == "range.csv:3");
}

TEST_CASE("checked numbers: a bench JSON value that does not fit is refused, not wrapped") {
    TempDir dir("bench-wrap");
    const std::filesystem::path json = dir.path() / "bench.json";
    for (const char* member : {R"("heads": 4294967328)", R"("heads": 32.5)", R"("heads": -4294967264)"}) {
        CAPTURE(member);
        write_text(json, std::string("[{") + member +
                             R"(, "head_dim": 128, "seq_len": 256, "seq_len_kv": 4096, "flops": 1,
                                "baseline_us": 2, "variants_us": {"V": 1}}])");
        CHECK(error_kind_of([&] { tools::read_bench_json(json); }) == ErrorKind::invalid_argument);
    }
}

TEST_CASE("checked numbers: CLI options refuse values that would saturate and reals that are not finite") {
    std::string output;
    const std::string cli = "env -u MQAJIT_TUNING_DB -u MQAJIT_SYSTEM_DB " + quoted(cli_path()) + " ";
    CHECK(run_command(cli + "db lookup --arch gfx950 --cu-num 256 --heads 32 --head-dim 128 --seq-len "
                            "99999999999999999999 --seq-len-kv 4096",
                      &output) == 2);
    CHECK(output.find("--seq-len") != std::string::npos);
    CHECK(run_command(cli + "db lookup --arch gfx950 --cu-num 4294967552 --heads 32 --head-dim 128 --seq-len 1 "
                            "--seq-len-kv 4096",
                      &output) == 2);
    for (const char* value : {"nan", "inf", "-nan", "1e999"}) {
        CAPTURE(value);
        CHECK(run_command(cli + "tune -i a.csv -o b.csv --prune-factor " + value, &output) == 2);
        CHECK(output.find("--prune-factor") != std::string::npos);
        CHECK(run_command(cli + "tune -i a.csv -o b.csv --candidate-timeout " + value, &output) == 2);
    }
}
