// `mqajit report`: the SVG heat map of a tuned table and the markdown comparison of tuning's gain,
// on a small hand-made tuned CSV and bench JSON whose numbers are worked out by hand below.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "tests/error_kind.hpp"
#include "tests/support.hpp"
#include "tools/common/report_colors.hpp"
#include "tools/common/report_compare.hpp"
#include "tools/common/report_heatmap.hpp"
#include "tools/common/report_markdown.hpp"

using namespace mqajit;

namespace {

constexpr const char* kA = "wgmma64x64x32_bkv128_r2_w2_lds4";
constexpr const char* kB = "wgmma64x128x32_bkv64_r4_w4_lds4";

// sm_90a: (256,4096) variant A 10 us vs baseline 40 (4x); (1024,4096) the baseline itself (1x);
// (256,8192) variant B with no baseline time. (1024,8192) is not tuned. Plus a gfx950 row.
const std::string kTunedCsv =
    "gfx,cu_num,heads,head_dim,seq_len,seq_len_kv,backend,variant,us,baseline_us,runner_up,tuner_version,"
    "compiler_version,driver_version,date\n"
    "sm_90a,132,32,128,256,4096,jit,wgmma64x64x32_bkv128_r2_w2_lds4,10,40,wgmma64x128x32_bkv64_r4_w4_lds4,t,c,d,"
    "2026-11-30\n"
    "sm_90a,132,32,128,1024,4096,baseline,baseline,50,50,,,,,\n"
    "sm_90a,132,32,128,256,8192,jit,wgmma64x128x32_bkv64_r4_w4_lds4,20,,,,,,\n"
    "gfx950,256,32,128,256,4096,flydsl,mfma32x32x64_bkv64_r1_w2_lds2,18.4,,,,,,\n";

// Variant C (..._r4_w2_lds3) is fastest where it ran but was not timed at (1024,4096), so it
// cannot be the best fixed variant. Geometric means over the 4 sm_90a H=32 shapes: A 22.67 us,
// B 22.13 us: B is the best fixed variant. The (256,8192) row gives FLOPs as TFLOP/s x us.
const std::string kBenchJson = R"([
  {"arch": "sm_90a", "cu_num": 132, "heads": 32, "head_dim": 128, "seq_len": 256, "seq_len_kv": 4096,
   "flops": 4e8, "baseline_us": 40, "us": 5, "tflops": 80,
   "variants_us": {"wgmma64x64x32_bkv128_r2_w2_lds4": 10, "wgmma64x128x32_bkv64_r4_w4_lds4": 12,
                   "wgmma64x128x32_bkv128_r4_w2_lds3": 5}},
  {"arch": "sm_90a", "cu_num": 132, "heads": 32, "head_dim": 128, "seq_len": 1024, "seq_len_kv": 4096,
   "flops": 2e9, "baseline_us": 50, "us": 25, "tflops": 80,
   "variants_us": {"wgmma64x64x32_bkv128_r2_w2_lds4": 30, "wgmma64x128x32_bkv64_r4_w4_lds4": 25}},
  {"heads": 32, "head_dim": 128, "seq_len": 256, "seq_len_kv": 8192, "baseline_us": 80, "us": 20, "tflops": 40,
   "variants_us": {"wgmma64x64x32_bkv128_r2_w2_lds4": 22, "wgmma64x128x32_bkv64_r4_w4_lds4": 20,
                   "wgmma64x128x32_bkv128_r4_w2_lds3": 1}},
  {"arch": "sm_90a", "cu_num": 132, "heads": 32, "head_dim": 128, "seq_len": 2048, "seq_len_kv": 4096,
   "flops": 4e9, "baseline_us": 100, "us": 40, "tflops": 100,
   "variants_us": {"wgmma64x64x32_bkv128_r2_w2_lds4": 40, "wgmma64x128x32_bkv64_r4_w4_lds4": 40}},
  {"arch": "sm_90a", "cu_num": 132, "heads": 64, "head_dim": 128, "seq_len": 256, "seq_len_kv": 4096,
   "flops": 8e8, "baseline_us": 1, "us": 1, "tflops": 800, "variants_us": {"other": 1}},
  {"arch": "gfx950", "cu_num": 256, "heads": 32, "head_dim": 128, "seq_len": 256, "seq_len_kv": 4096,
   "flops": 4e8, "baseline_us": 1, "us": 1, "tflops": 400, "variants_us": {"other": 1}}
])";

void write_file(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

std::string read_file(const std::filesystem::path& path) {
    std::ifstream file(path, std::ios::binary);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
    return n;
}

// The SVG group of the cell whose tooltip starts with "S=<s> N=<n>".
std::string cell_of(const std::string& svg, int s, int n) {
    const std::size_t title = svg.find(fmt::format("<title>S={} N={}\n", s, n));
    if (title == std::string::npos) return {};
    const std::size_t begin = svg.rfind("<g class=\"cell", title);
    return svg.substr(begin, svg.find("</g>", title) - begin);
}

struct Fixture {
    testing::TempDir dir{"report"};
    std::filesystem::path csv = dir.path() / "tuned.csv";
    std::filesystem::path json = dir.path() / "bench.json";
    Fixture() {
        write_file(csv, kTunedCsv);
        write_file(json, kBenchJson);
    }
    tools::TunedTable sm90() const { return tools::load_tuned_table(csv, {.arch = "sm90a"}); }
};

}  // namespace

TEST_CASE("report: a tuned table loads one group, and says which to pick when the file has several") {
    Fixture f;
    const tools::TunedTable table = f.sm90();
    CHECK(table.group.arch == "sm_90a");
    CHECK(table.group.cu_num == 132);
    CHECK(table.rows.size() == 3);
    CHECK(tools::load_tuned_table(f.csv, {.cu_num = 256}).rows.size() == 1);

    try {
        tools::load_tuned_table(f.csv, {});
        FAIL("two groups and no filter must be refused");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::invalid_argument);
        CHECK(std::string(e.what()).find("--arch gfx950 --cu-num 256") != std::string::npos);
        CHECK(std::string(e.what()).find("--arch sm_90a --cu-num 132") != std::string::npos);
    }
    CHECK(testing::error_kind_of([&] { tools::load_tuned_table(f.csv, {.arch = "sm_90a", .heads = 64}); }) ==
          ErrorKind::invalid_argument);
    CHECK(testing::error_kind_of([&] { tools::load_tuned_table(f.dir.path() / "missing.csv", {}); }) ==
          ErrorKind::not_found);
}

TEST_CASE("report: the heat map has one cell per (seq_len, seq_len_kv), grey where not tuned") {
    Fixture f;
    const std::string svg = tools::heatmap_svg(f.sm90(), {.title = "Shipped <table> & co"});
    CHECK(svg.starts_with("<?xml"));
    CHECK(count(svg, "<g ") == count(svg, "</g>"));
    CHECK(count(svg, "<g class=\"cell") == 4);  // S {256, 1024} x N {4096, 8192}
    CHECK(count(svg, "<g class=\"cell tuned\">") == 3);
    CHECK(count(svg, "<g class=\"cell missing\">") == 1);
    CHECK(svg.find("<title>Shipped &lt;table&gt; &amp; co</title>") != std::string::npos);

    const std::regex row_label(R"(class="row" font-size="12">(\d+)<)"), column_label(R"(class="column" font-size="12">(\d+)<)");
    std::vector<std::string> rows, columns;
    for (std::sregex_iterator it(svg.begin(), svg.end(), row_label), end; it != end; ++it) rows.push_back((*it)[1]);
    for (std::sregex_iterator it(svg.begin(), svg.end(), column_label), end; it != end; ++it) columns.push_back((*it)[1]);
    CHECK(rows == std::vector<std::string>{"256", "1024"});
    CHECK(columns == std::vector<std::string>{"4096", "8192"});

    // The 4x cell takes the top colour of the scale, the 1x cell the bottom one.
    const std::string fast = cell_of(svg, 256, 4096);
    CHECK(fast.find(kA) != std::string::npos);  // the full name, in the tooltip
    CHECK(fast.find(">wgmma64x64x32<") != std::string::npos);
    CHECK(fast.find(">bkv128 r2 w2 lds4<") != std::string::npos);
    CHECK(fast.find(">10.0 µs<") != std::string::npos);
    CHECK(fast.find(">4.00x<") != std::string::npos);
    CHECK(fast.find("fill=\"#fde725\"") != std::string::npos);
    const std::string same = cell_of(svg, 1024, 4096);
    CHECK(same.find(">baseline<") != std::string::npos);
    CHECK(same.find(">1.00x<") != std::string::npos);
    CHECK(same.find("fill=\"#440154\"") != std::string::npos);
    const std::string no_baseline = cell_of(svg, 256, 8192);
    CHECK(no_baseline.find(kB) != std::string::npos);
    CHECK(no_baseline.find(">no baseline<") != std::string::npos);

    // The legend labels both ends of the scale.
    CHECK(svg.find(">1.00x</text>") != std::string::npos);
    CHECK(svg.find(">4.00x</text>") != std::string::npos);
    CHECK(svg.find(">not tuned</text>") != std::string::npos);
}

TEST_CASE("report: the speed-up scale maps its ends to 0 and 1 and labels round values between") {
    const tools::SpeedupScale scale(1.0, 6.0);
    CHECK(scale.position(1.0) == doctest::Approx(0.0));
    CHECK(scale.position(6.0) == doctest::Approx(1.0));
    CHECK(scale.position(100.0) == doctest::Approx(1.0));
    CHECK(scale.position(std::sqrt(6.0)) == doctest::Approx(0.5));
    CHECK(scale.color(1.0) == "#440154");
    CHECK(scale.color(6.0) == "#fde725");
    CHECK(scale.dark(1.0));
    CHECK(!scale.dark(6.0));
    const std::vector<double> ticks = scale.ticks();
    CHECK(ticks.front() == 1.0);
    CHECK(ticks.back() == 6.0);
    CHECK(std::find(ticks.begin(), ticks.end(), 2.0) != ticks.end());
    CHECK(std::is_sorted(ticks.begin(), ticks.end()));

    const tools::SpeedupScale one(3.0, 3.0);  // a single value still gets a range around it
    CHECK(one.lowest() < 3.0);
    CHECK(one.highest() > 3.0);
    CHECK(one.position(3.0) == doctest::Approx(0.5));
}

TEST_CASE("report: label lines and escaping") {
    CHECK(tools::variant_label_lines(kB) == std::pair<std::string, std::string>{"wgmma64x128x32", "bkv64 r4 w4 lds4"});
    CHECK(tools::variant_label_lines("baseline") == std::pair<std::string, std::string>{"baseline", ""});
    CHECK(tools::xml_escape("a<b & \"c\" 'd'>") == "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
}

TEST_CASE("report: tuned vs baseline vs the best fixed variant, per shape and in geometric mean") {
    Fixture f;
    const tools::TuningComparison c = tools::compare_tuning(f.sm90(), tools::read_bench_json(f.json));
    CHECK(c.best_fixed == kB);
    CHECK(c.num_fixed_candidates == 2);
    REQUIRE(c.shapes.size() == 4);  // the H=64 and gfx950 rows are not this table's
    CHECK(c.shapes[0].tuned_kernel == kA);
    CHECK(*c.shapes[0].tuned_us == 10.0);
    CHECK(c.shapes[0].best_fixed_us == 12.0);
    CHECK(c.shapes[1].tuned_kernel == "baseline");
    CHECK(*c.shapes[1].tuned_us == 50.0);
    CHECK(c.shapes[2].flops == doctest::Approx(8e8));  // from tflops x us
    CHECK(c.shapes[3].tuned_kernel.empty());
    CHECK(!c.shapes[3].tuned_us);

    CHECK(c.means.num_shapes == 3);
    CHECK(c.means.speedup_over_baseline == doctest::Approx(std::cbrt(4.0 * 1.0 * 4.0)));
    CHECK(c.means.speedup_over_best_fixed == doctest::Approx(std::cbrt(1.2 * 0.5 * 1.0)));
    CHECK(c.means.tuned_tflops == doctest::Approx(40.0));
    CHECK(c.means.baseline_tflops == doctest::Approx(std::cbrt(10.0 * 40.0 * 10.0)));
    CHECK(c.means.best_fixed_tflops == doctest::Approx(std::cbrt(400.0 / 12 * 80.0 * 40.0)));

    const std::string md = tools::markdown_report(c, "tuned.csv", "bench.json");
    CHECK(md.find("Best fixed variant: `wgmma64x128x32_bkv64_r4_w4_lds4`") != std::string::npos);
    CHECK(md.find("| 256 | 4096 | `wgmma64x64x32_bkv128_r2_w2_lds4` | 10.0 | 40 | 40.0 | 10 | 12.0 | 33 | 4.00x | 1.20x |") !=
          std::string::npos);
    CHECK(md.find("| 1024 | 4096 | `baseline` | 50.0 | 40 | 50.0 | 40 | 25.0 | 80 | 1.00x | 0.50x |") != std::string::npos);
    CHECK(md.find("| 2048 | 4096 | not tuned |  |  | 100.0 | 40 | 40.0 | 100 |  |  |") != std::string::npos);
    CHECK(md.find("| geometric mean (3 shapes) | | | | 40 | | 16 | | 47 | 2.52x | 0.84x |") != std::string::npos);
    CHECK(md.find("leave out 1 shape(s) the table does not tune and 0") != std::string::npos);
}

TEST_CASE("report: bench files it cannot use are refused with the reason") {
    Fixture f;
    auto kind_for = [&](const std::string& json) {
        write_file(f.json, json);
        return testing::error_kind_of([&] { tools::compare_tuning(f.sm90(), tools::read_bench_json(f.json)); });
    };
    CHECK(kind_for("{}") == ErrorKind::invalid_argument);        // not an array
    CHECK(kind_for("[{\"heads\": 32}]") == ErrorKind::invalid_argument);  // members missing
    CHECK(kind_for("[{\"heads\": \"x\", \"head_dim\": 128}]") == ErrorKind::invalid_argument);
    CHECK(kind_for("[]") == ErrorKind::invalid_argument);        // no rows for the table
    const std::string row = R"({"heads": 32, "head_dim": 128, "seq_len": 256, "seq_len_kv": 4096, "flops": 1,
                                "baseline_us": 2, "variants_us": {"V": 1}})";
    CHECK(kind_for("[" + row + "," + row + "]") == ErrorKind::invalid_argument);  // a shape twice
    CHECK(testing::error_kind_of([&] { tools::read_bench_json(f.dir.path() / "none.json"); }) == ErrorKind::not_found);
    // A row whose op is no string names the file, the row and the field, not only JSON's type error.
    write_file(f.json, "[{\"op\": 5}]");
    CHECK_THROWS_WITH_AS(tools::read_bench_json(f.json), doctest::Contains("row 0: 'op' is 5, not a string"), Error);
}

TEST_CASE("report cli: writes the SVG and the markdown, and explains bad usage") {
    Fixture f;
    const auto cli = testing::cli_path().string() + " report --tuned " + f.csv.string();
    const auto svg = f.dir.path() / "out" / "map.svg";
    const auto md = f.dir.path() / "table.md";
    std::string output;
    REQUIRE(testing::run_command(cli + " --arch sm_90a -o " + svg.string() + " --bench " + f.json.string() +
                                     " --markdown " + md.string(),
                                 &output) == 0);
    CHECK(count(read_file(svg), "<g class=\"cell") == 4);
    CHECK(read_file(md).find("| 1024 | 4096 | `baseline` |") != std::string::npos);

    CHECK(testing::run_command(cli + " --arch sm_90a --bench " + f.json.string() + " --markdown", &output) == 0);
    CHECK(output.find("| geometric mean (3 shapes) |") != std::string::npos);

    CHECK(testing::run_command(cli + " -o " + svg.string(), &output) == 2);  // two groups in the file
    CHECK(output.find("pick one with") != std::string::npos);
    CHECK(testing::run_command(cli + " --arch sm_90a", &output) == 2);
    CHECK(output.find("-o report.svg and/or --markdown") != std::string::npos);
    CHECK(testing::run_command(cli + " --arch sm_90a --markdown", &output) == 2);
    CHECK(output.find("--markdown needs --bench") != std::string::npos);
}

TEST_CASE("report: the README links a heat map that exists") {
    const std::filesystem::path source(MQAJIT_SOURCE_DIR);
    CHECK(read_file(source / "README.md").find("docs/tuning_report_sm90a_glm5.svg") != std::string::npos);
    const std::string svg = read_file(source / "docs" / "tuning_report_sm90a_glm5.svg");
    CHECK(count(svg, "<g class=\"cell tuned\">") == 24);
}
