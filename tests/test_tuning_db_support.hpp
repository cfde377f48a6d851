#pragma once
// Helpers shared by the test_tuning_db_*.cpp files: rows, CSV files on disk, and a capture of the
// library's log so a test can count its warnings.

#include <spdlog/sinks/ostream_sink.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/log.hpp"
#include "tests/support.hpp"
#include "tuning_db/row_table.hpp"
#include "tuning_db/sqlite.hpp"
#include "tuning_db/system_db.hpp"
#include "tuning_db/tuned_row.hpp"

namespace mqajit::testing {

// A row in clean_logits=1 mode, like the rows of the test CSVs (which have no clean_logits column).
inline TunedRow make_row(std::string arch, int cu_num, int heads, int head_dim, std::int64_t seq_len,
                         std::int64_t seq_len_kv, std::string variant, double us) {
    TunedRow row;
    row.key = {.arch = std::move(arch), .cu_num = cu_num, .heads = heads, .head_dim = head_dim,
               .clean_logits = kCleanLogitsWithoutColumn, .seq_len = seq_len, .seq_len_kv = seq_len_kv};
    row.backend = variant == "baseline" ? "baseline" : "jit";
    row.variant = std::move(variant);
    row.us = us;
    return row;
}

// A key of the gfx950 machine the test tables use (256 CUs).
inline ShapeKey gfx950_key(int heads, int head_dim, int clean_logits, std::int64_t seq_len, std::int64_t seq_len_kv) {
    return {.arch = "gfx950", .cu_num = 256, .heads = heads, .head_dim = head_dim, .clean_logits = clean_logits,
            .seq_len = seq_len, .seq_len_kv = seq_len_kv};
}

// A gfx950 row of the GLM-5 group (cu_num 256, heads 32, head_dim 128).
inline TunedRow glm5_row(std::int64_t seq_len, std::int64_t seq_len_kv, std::string variant, double us = 10.0) {
    return make_row("gfx950", 256, 32, 128, seq_len, seq_len_kv, std::move(variant), us);
}

inline void write_text(const std::filesystem::path& file, std::string_view text) {
    std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << text;
}

inline std::string read_text(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

inline constexpr std::string_view kCsvHeader = "gfx,cu_num,heads,head_dim,seq_len,seq_len_kv,backend,variant,us\n";

// A fresh folder with a system database built from one CSV (`text`, its header included) that
// must load whole into `num_rows` rows, and a path for a user database beside it.
struct SystemDbFixture {
    TempDir dir;
    std::filesystem::path csv = dir.path() / "table.csv";
    std::filesystem::path system_db = dir.path() / "system.db";
    std::filesystem::path user_db = dir.path() / "user" / "tuning.db";
    SystemDbFixture(std::string_view tag, std::string_view text, std::size_t num_rows) : dir(tag) {
        write_text(csv, text);
        const auto built = tuning::build_system_db(system_db, {csv});
        REQUIRE(built.mqa_logits.problems.empty());
        REQUIRE(built.mqa_logits.rows.size() == num_rows);
    }
};

// A user database as mqajit wrote it before the clean_logits column (schema version 1).
inline void make_version_1_db(const std::filesystem::path& file) {
    sqlite::Database database(file, sqlite::OpenMode::read_write_create);
    database.execute(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES ('schema_version', '1');"
        "CREATE TABLE tuned_mqa_logits (arch TEXT NOT NULL, cu_num INTEGER NOT NULL, heads INTEGER NOT NULL, "
        "head_dim INTEGER NOT NULL, seq_len INTEGER NOT NULL, seq_len_kv INTEGER NOT NULL, backend TEXT NOT NULL, "
        "variant TEXT NOT NULL, us REAL NOT NULL, baseline_us REAL, runner_up TEXT NOT NULL, tuner_version TEXT NOT "
        "NULL, compiler_version TEXT NOT NULL, driver_version TEXT NOT NULL, date TEXT NOT NULL, origin TEXT NOT NULL, "
        "PRIMARY KEY (arch, cu_num, heads, head_dim, seq_len, seq_len_kv)) WITHOUT ROWID;"
        "INSERT INTO tuned_mqa_logits VALUES ('sm_90a', 132, 32, 128, 1024, 8192, 'jit', "
        "'wgmma64x128x32_bkv64_r4_w2_lds4', 11.5, 20.25, 'baseline', 'mqajit-tune 0.1.0', 'nvrtc 13.0', '13.0', "
        "'2026-11-30', '');"
        "INSERT INTO tuned_mqa_logits VALUES ('sm_90a', 132, 32, 128, 4096, 8192, 'baseline', 'baseline', 30, NULL, "
        "'', '', '', '', '', '');");
}

// The prefill table as schema versions 2 and 3 wrote it: no logits_dtype column (all rows float32).
inline constexpr std::string_view kVersion3PrefillTable =
    "CREATE TABLE tuned_mqa_logits (arch TEXT NOT NULL, cu_num INTEGER NOT NULL, heads INTEGER NOT NULL, "
    "head_dim INTEGER NOT NULL, clean_logits INTEGER NOT NULL, seq_len INTEGER NOT NULL, seq_len_kv INTEGER NOT NULL, "
    "backend TEXT NOT NULL, variant TEXT NOT NULL, us REAL NOT NULL, baseline_us REAL, runner_up TEXT NOT NULL, "
    "tuner_version TEXT NOT NULL, compiler_version TEXT NOT NULL, driver_version TEXT NOT NULL, date TEXT NOT NULL, "
    "origin TEXT NOT NULL, PRIMARY KEY (arch, cu_num, heads, head_dim, clean_logits, seq_len, seq_len_kv)) "
    "WITHOUT ROWID;";

// A user database of schema version 2 (before the paged_mqa_logits table) or 3 (before the
// prefill table's logits_dtype column), holding one prefill row.
inline void make_version_2_or_3_db(const std::filesystem::path& file, int version, std::string_view arch,
                                   int cu_num, std::string_view variant) {
    sqlite::Database database(file, sqlite::OpenMode::read_write_create);
    database.execute(fmt::format("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                                 "INSERT INTO meta VALUES ('schema_version', '{}');", version));
    database.execute(std::string(kVersion3PrefillTable));
    if (version == 3) database.execute(tuning::table_ddl<PagedShapeKey>());
    database.execute(fmt::format("INSERT INTO tuned_mqa_logits VALUES ('{}', {}, 32, 128, 0, 1024, 4096, 'jit', "
                                 "'{}', 9, NULL, '', '', '', '', '', '')", arch, cu_num, variant));
}

// Whether `text` is valid UTF-8, as JSON output (and Python) need it.
inline bool valid_utf8(std::string_view text) {
    try {
        (void)nlohmann::json(std::string(text)).dump();
        return true;
    } catch (const nlohmann::json::exception&) {
        return false;
    }
}

inline std::filesystem::path shipped_configs_dir() {
    return std::filesystem::path(MQAJIT_SOURCE_DIR) / "tuning_db" / "configs";
}

// Collects what the "mqajit" logger prints while it lives.
class LogCapture {
public:
    LogCapture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_)) {
        sink_->set_pattern("%l %v");
        log().sinks().push_back(sink_);
    }
    ~LogCapture() { std::erase(log().sinks(), sink_); }
    LogCapture(const LogCapture&) = delete;
    LogCapture& operator=(const LogCapture&) = delete;

    std::string text() const { return stream_.str(); }
    int count(std::string_view needle) const {
        const std::string all = text();
        int found = 0;
        for (auto at = all.find(needle); at != std::string::npos; at = all.find(needle, at + needle.size())) ++found;
        return found;
    }
    int warnings() const {
        std::istringstream lines(text());
        int found = 0;
        for (std::string line; std::getline(lines, line);) found += line.starts_with("warning ") ? 1 : 0;
        return found;
    }

private:
    std::ostringstream stream_;
    std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

}  // namespace mqajit::testing
