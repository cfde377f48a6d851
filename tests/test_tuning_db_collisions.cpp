// Collisions: two config files (or two lines) that give one shape key different kernels are
// reported with both places; the later file in sorted path order wins; identical duplicates are
// fine; source files are never rewritten.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "tests/support.hpp"
#include "tests/test_tuning_db_support.hpp"
#include "tuning_db/config_files.hpp"
#include "tuning_db/system_db.hpp"
#include "tuning_db/tuning_db.hpp"

using namespace mqajit;
using namespace mqajit::testing;

namespace {

constexpr std::string_view kVariantA = "mfma32x32x64_bkv64_r1_w2_lds2";
constexpr std::string_view kVariantB = "mfma32x32x64_bkv128_r2_w4_lds3";

std::string glm5_line(int seq_len, int seq_len_kv, std::string_view variant, double us = 10.0) {
    return fmt::format("gfx950,256,32,128,{},{},flydsl,{},{}\n", seq_len, seq_len_kv, variant, us);
}

}  // namespace

TEST_CASE("tuning collisions: two files disagreeing on a key are reported with both places") {
    TempDir dir("collide");
    const auto a = dir.path() / "a_tuned_mqa_logits.csv";
    const auto b = dir.path() / "b_tuned_mqa_logits.csv";
    const std::string a_text = std::string(kCsvHeader) + glm5_line(256, 4096, kVariantA) + glm5_line(1024, 4096, kVariantA);
    const std::string b_text = std::string(kCsvHeader) + glm5_line(512, 4096, kVariantB) + glm5_line(1024, 4096, kVariantB);
    write_text(a, a_text);
    write_text(b, b_text);
    // The order the files are named in does not matter: b sorts after a, so b wins.
    for (const auto& files : {std::vector{a, b}, std::vector{b, a}}) {
        const auto loaded = tuning::load_config_files(files);
        REQUIRE(loaded.collisions.size() == 1);
        const auto& collision = loaded.collisions[0];
        CHECK(collision.key == gfx950_key(32, 128, 1, 1024, 4096));
        CHECK(collision.dropped.origin == a.string() + ":3");
        CHECK(collision.kept.origin == b.string() + ":3");
        CHECK(collision.kept.variant == kVariantB);
        const std::string message = collision.message();
        CHECK(message.find(a.string() + ":3") != std::string::npos);
        CHECK(message.find(b.string() + ":3") != std::string::npos);
        CHECK(message.find(std::string(kVariantA)) != std::string::npos);
        CHECK(message.find(std::string(kVariantB)) != std::string::npos);
        CHECK(loaded.rows.size() == 3);
        CHECK(loaded.files == std::vector{a, b});
    }
    // The loader never rewrites a source file.
    CHECK(read_text(a) == a_text);
    CHECK(read_text(b) == b_text);
}

TEST_CASE("tuning collisions: the system database holds the winning row") {
    TempDir dir("collide-system");
    const auto a = dir.path() / "model_configs" / "a_tuned_mqa_logits.csv";
    const auto z = dir.path() / "model_configs" / "z_tuned_mqa_logits.csv";
    write_text(a, std::string(kCsvHeader) + glm5_line(1024, 4096, kVariantA));
    write_text(z, std::string(kCsvHeader) + glm5_line(1024, 4096, kVariantB));
    const auto built = tuning::build_system_db(dir.path() / "system.db", {z, a});
    CHECK(built.mqa_logits.collisions.size() == 1);
    TuningDb db(dir.path() / "system.db", dir.path() / "user.db");
    const TunedRow* row = db.lookup(gfx950_key(32, 128, 1, 1024, 4096));
    REQUIRE(row != nullptr);
    CHECK(row->variant == kVariantB);
    CHECK(row->origin == z.string() + ":2");
}

TEST_CASE("tuning collisions: identical duplicates and re-measurements are not collisions") {
    TempDir dir("collide-dup");
    const auto a = dir.path() / "a.csv";
    const auto b = dir.path() / "b.csv";
    write_text(a, std::string(kCsvHeader) + glm5_line(256, 4096, kVariantA, 10.0));
    write_text(b, std::string(kCsvHeader) + glm5_line(256, 4096, kVariantA, 10.0) + glm5_line(256, 4096, kVariantA, 9.5));
    const auto loaded = tuning::load_config_files({a, b});
    CHECK(loaded.collisions.empty());
    CHECK(loaded.problems.empty());
    REQUIRE(loaded.rows.size() == 1);
    CHECK(loaded.rows[0].us == 9.5);  // the later measurement
}

TEST_CASE("tuning collisions: two lines of one file disagreeing collide, the later line wins") {
    TempDir dir("collide-lines");
    const auto a = dir.path() / "a.csv";
    write_text(a, std::string(kCsvHeader) + glm5_line(256, 4096, kVariantB) + glm5_line(512, 4096, kVariantA) +
                      glm5_line(256, 4096, kVariantA));
    const auto loaded = tuning::load_config_files({a});
    REQUIRE(loaded.collisions.size() == 1);
    CHECK(loaded.collisions[0].dropped.origin == a.string() + ":2");
    CHECK(loaded.collisions[0].kept.origin == a.string() + ":4");
    REQUIRE(loaded.rows.size() == 2);
    CHECK(loaded.rows[0].variant == kVariantA);
}

TEST_CASE("tuning collisions: the shipped configs do not collide") {
    const auto loaded = tuning::load_config_files(tuning::shipped_config_files(shipped_configs_dir()));
    CHECK(loaded.collisions.empty());
    CHECK(loaded.problems.empty());
}
