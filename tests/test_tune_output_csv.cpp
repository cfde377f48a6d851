// The tuner's output CSV: rows a run does not tune come out byte for byte (a gfx950 `flydsl` row
// keeps its backend and its `56.0`), tuned rows replace their key's line in place or are appended,
// the header and its column order are kept, and the shipped GLM-5 table survives a retune.

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "tests/error_kind.hpp"
#include "tests/support.hpp"
#include "tools/common/tune_output_csv.hpp"

using namespace mqajit;

namespace {

TunedRow sm90_row(std::int64_t seq_len, const std::string& variant, double us) {
    return TunedRow{.key = {.arch = "sm_90a", .cu_num = 132, .heads = 32, .head_dim = 128, .clean_logits = 1,
                            .seq_len = seq_len, .seq_len_kv = 4096},
                    .backend = "jit", .variant = variant, .us = us, .baseline_us = 30.0, .runner_up = "baseline",
                    .tuner_version = "mqajit-tune 0.1.0", .compiler_version = "nvrtc 13.0",
                    .driver_version = "13.0", .date = "2026-11-30"};
}

std::string file_text(const std::filesystem::path& path) {
    std::stringstream text;
    text << std::ifstream(path, std::ios::binary).rdbuf();
    return text.str();
}

const std::string kHeader = tuning::csv_header();
const std::string kGfx950 =
    "gfx950,256,32,128,1,float32,256,4096,flydsl,mfma32x32x64_bkv64_r1_w2_lds2,18.4,,,,,,\n"
    "gfx950,256,32,128,1,float32,2048,4096,flydsl,mfma32x32x64_bkv128_r2_w4_lds3,56.0,,,,,,\n";
constexpr const char* kVariant = "wgmma64x128x32_bkv128_r4_w2_lds4";

}  // namespace

TEST_CASE("tune output csv: untuned rows come out byte for byte, tuned ones replace their line or follow") {
    const std::string old_sm90 = "sm_90a,132,32,128,1,float32,256,4096,jit," + std::string(kVariant) + ",21.50,,,,,,\n";
    const std::string bad = "gfx950,256,32,128,1,float32,oops,4096,flydsl,x,1.0,,,,,,\n";
    const std::string text = kHeader + "\n" + kGfx950 + old_sm90 + "\n" + bad + old_sm90;
    tools::TuneOutputCsv table = tools::TuneOutputCsv::parse(text, "t.csv");
    CHECK(table.text() == text);  // nothing tuned: nothing changes
    REQUIRE(table.rows().size() == 4);
    CHECK(table.rows()[1].backend == "jit");  // flydsl is read as jit, yet written as it was
    CHECK(table.rows()[2].origin == "t.csv:4");
    REQUIRE(table.problems().size() == 1);
    CHECK(table.problems()[0].place == "t.csv:6");

    const TunedRow retuned = sm90_row(256, kVariant, 20.25);
    const TunedRow added = sm90_row(1024, kVariant, 40.5);
    table.upsert(retuned);
    table.upsert(added);
    const std::string expected = kHeader + "\n" + kGfx950 + tuning::csv_line(retuned) + "\n" + "\n" + bad +
                                 tuning::csv_line(added) + "\n";
    CHECK(table.text() == expected);  // the later duplicate of the retuned key is gone
    for (const TunedRow& same : table.rows()) table.upsert(same);  // the same values: no line changes
    CHECK(table.text() == expected);
    CHECK(table.text().find("flydsl,mfma32x32x64_bkv128_r2_w4_lds3,56.0,") != std::string::npos);
    CHECK(table.rows().size() == 4);
}

TEST_CASE("tune output csv: a file's own header, column order and line ends are kept") {
    const std::string header = "seq_len,seq_len_kv,gfx,cu_num,heads,head_dim,variant,backend,us,note";
    const std::string kept = "256,4096,gfx950,256,32,128,mfma32x32x64_bkv64_r1_w2_lds2,flydsl,18.40,hand tuned";
    const std::string text = header + "\r\n" + kept + "\r\n";
    tools::TuneOutputCsv table = tools::TuneOutputCsv::parse(text, "own.csv");
    CHECK(table.text() == text);
    table.upsert(sm90_row(1024, kVariant, 40.5));
    CHECK(table.text() ==
          text + "1024,4096,sm_90a,132,32,128," + std::string(kVariant) + ",jit,40.5,\r\n");

    testing::TempDir dir("tune-output");
    table.write(dir.path() / "out.csv");
    const tools::TuneOutputCsv back = tools::TuneOutputCsv::read(dir.path() / "out.csv");
    REQUIRE(back.rows().size() == 2);
    CHECK(back.rows()[1].key == sm90_row(1024, kVariant, 40.5).key);
    CHECK(back.rows()[1].us == 40.5);
    CHECK(back.problems().empty());
}

TEST_CASE("tune output csv: no file or a blank one is a fresh table, another file's header is refused") {
    testing::TempDir dir("tune-output");
    tools::TuneOutputCsv fresh = tools::TuneOutputCsv::read(dir.path() / "absent.csv");
    CHECK(fresh.rows().empty());
    CHECK(fresh.text() == kHeader + "\n");
    fresh.upsert(sm90_row(256, kVariant, 20));
    CHECK(fresh.text() == kHeader + "\n" + tuning::csv_line(sm90_row(256, kVariant, 20)) + "\n");
    CHECK(tools::TuneOutputCsv::parse("\n  \n", "blank.csv").text() == kHeader + "\n");
    CHECK(testing::error_kind_of([] { tools::TuneOutputCsv::parse("seq_len,seq_len_kv\n256,4096\n", "shapes.csv"); }) ==
          ErrorKind::invalid_argument);
}

TEST_CASE("tune output csv: retuning the shipped GLM-5 table's sm_90a rows leaves its gfx950 rows as they are") {
    const auto shipped = std::filesystem::path(MQAJIT_SOURCE_DIR) / "tuning_db/configs/model_configs/glm5_tuned_mqa_logits.csv";
    const std::string text = file_text(shipped);
    tools::TuneOutputCsv table = tools::TuneOutputCsv::parse(text, shipped.string());
    CHECK(table.text() == text);
    std::size_t retuned = 0;
    for (TunedRow row : table.rows()) {
        if (row.key.arch != "sm_90a") continue;
        row.us *= 0.5;
        table.upsert(row);
        ++retuned;
    }
    CHECK(retuned == 72);  // 24 shapes: float32 in both clean_logits modes, bfloat16 in mode 0
    std::istringstream before(text), after(table.text());
    std::string line_before, line_after;
    std::size_t gfx950 = 0, lines = 0;
    while (std::getline(before, line_before)) {
        REQUIRE(std::getline(after, line_after));
        ++lines;
        if (line_before.starts_with("gfx950,")) {
            CHECK(line_after == line_before);
            ++gfx950;
        } else if (line_before.starts_with("sm_90a,")) {
            CHECK(line_after != line_before);
        }
    }
    CHECK(!std::getline(after, line_after));
    CHECK(gfx950 == 24);
    CHECK(lines == 97);
}

TEST_CASE("tune output csv: a table without clean_logits gains the column when a clean_logits=0 row is written") {
    const std::string header = "gfx,cu_num,heads,head_dim,seq_len,seq_len_kv,backend,variant,us";
    const std::string old_row = "sm_90a,132,32,128,256,4096,jit," + std::string(kVariant) + ",21.50";
    const std::string text = header + "\r\n" + old_row + "\r\n";
    tools::TuneOutputCsv table = tools::TuneOutputCsv::parse(text, "old.csv");
    REQUIRE(table.rows().size() == 1);
    CHECK(table.rows()[0].key.clean_logits == 1);
    // A clean_logits=1 row needs no column: the file keeps its layout.
    table.upsert(sm90_row(1024, kVariant, 40.5));
    CHECK(table.text() == text + "sm_90a,132,32,128,1024,4096,jit," + std::string(kVariant) + ",40.5\r\n");

    TunedRow callers = sm90_row(256, kVariant, 19.75);
    callers.key.clean_logits = 0;
    table.upsert(callers);
    const std::string expected = header + ",clean_logits\r\n" + old_row + ",1\r\n" +
                                 "sm_90a,132,32,128,1024,4096,jit," + std::string(kVariant) + ",40.5,1\r\n" +
                                 "sm_90a,132,32,128,256,4096,jit," + std::string(kVariant) + ",19.75,0\r\n";
    CHECK(table.text() == expected);
    const tools::TuneOutputCsv back = tools::TuneOutputCsv::parse(table.text(), "old.csv");
    REQUIRE(back.rows().size() == 3);
    CHECK(back.problems().empty());
    CHECK(back.rows()[0].key.clean_logits == 1);
    CHECK(back.rows()[0].us == 21.5);
    CHECK(back.rows()[1].key.clean_logits == 1);
    CHECK(back.rows()[2].key == callers.key);
}

TEST_CASE("tune output csv: clean_logits=0 rows join the shipped GLM-5 table after its rows, which stay as they are") {
    const auto shipped = std::filesystem::path(MQAJIT_SOURCE_DIR) / "tuning_db/configs/model_configs/glm5_tuned_mqa_logits.csv";
    // The shipped table as it was before its clean_logits=0 rows were tuned: its mode-1 rows only.
    std::istringstream shipped_lines(file_text(shipped));
    std::string text, line;
    while (std::getline(shipped_lines, line)) {
        if (!line.starts_with("sm_90a,132,32,128,0,")) text += line + "\n";
    }
    tools::TuneOutputCsv table = tools::TuneOutputCsv::parse(text, shipped.string());
    REQUIRE(table.rows().size() == 48);
    // NOTES: the rows are written in the file's own columns (it has no logits_dtype: float32 rows).
    const std::vector<std::string> columns = tuning::split_csv_line(text.substr(0, text.find('\n')));
    std::string added;
    for (TunedRow row : table.rows()) {
        if (row.key.arch != "sm_90a") continue;
        row.key.clean_logits = 0;
        table.upsert(row);
        added += tuning::csv_line(row, columns) + "\n";
    }
    CHECK(table.text() == text + added);
    CHECK(table.rows().size() == 72);
}
