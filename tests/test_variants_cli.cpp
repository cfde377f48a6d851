// `mqajit variants`: its output agrees with the registry; bad input gives the documented exit codes.

#include <doctest/doctest.h>

#include <string>

#include "tests/support.hpp"
#include "variants/arch.hpp"
#include "codegen/variant_registry.hpp"

namespace {

using mqajit::Arch;

const mqajit::VariantRegistry& registry() { return mqajit::VariantRegistry::instance(); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::size_t count_occurrences(const std::string& text, const std::string& part) {
    std::size_t count = 0;
    for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
    return count;
}

}  // namespace

TEST_CASE("mqajit variants --json lists the sm_90a variants with support") {
    const std::string cli = mqajit::testing::cli_path().string();
    std::string output;
    REQUIRE(mqajit::testing::run_command(cli + " variants --arch sm_90a --heads 32 --head-dim 128 --json", &output) == 0);
    CAPTURE(output);
    CHECK(output.front() == '[');
    CHECK(contains(output, R"("variant": "wgmma64x128x32_bkv128_r4_w2_lds6")"));
    CHECK(contains(output, R"("variant": "mma16x8x16_bkv64_r4_w4_lds2")"));
    CHECK(contains(output, R"("supported": true)"));
    CHECK(contains(output, R"("reason": "N=128 must equal r x heads = 2 x 32 = 64")"));
    CHECK(contains(output, R"("head_dim": 128)"));
    CHECK_FALSE(contains(output, "mfma"));
    CHECK(count_occurrences(output, R"("variant":)") == registry().variants(Arch::parse("sm_90a")).size());
    CHECK(count_occurrences(output, R"("supported": true)") == registry().variants(Arch::parse("sm_90a"), 32, 128).size());
}

TEST_CASE("mqajit variants prints a table, honours MQAJIT_ARCH and rejects bad input") {
    const std::string cli = mqajit::testing::cli_path().string();
    std::string output;
    REQUIRE(mqajit::testing::run_command(cli + " variants --arch gfx950 --heads 64 --head-dim 128", &output) == 0);
    CAPTURE(output);
    CHECK(output.starts_with("ARCH"));
    CHECK(contains(output, "mfma32x32x64_bkv128_r4_w4_lds3"));
    CHECK(contains(output, "LDS 180224 B exceeds 163840 B"));
    CHECK_FALSE(contains(output, "sm_90a"));

    REQUIRE(mqajit::testing::run_command("MQAJIT_ARCH=gfx942 " + cli + " variants --json", &output) == 0);
    CHECK(contains(output, R"("arch": "gfx942")"));
    CHECK_FALSE(contains(output, R"("arch": "gfx950")"));
    CHECK_FALSE(contains(output, R"("supported")"));

    REQUIRE(mqajit::testing::run_command(cli + " variants", &output) == 0);
    for (const std::string& arch : registry().archs()) CHECK(contains(output, arch));

    CHECK(mqajit::testing::run_command(cli + " variants --arch sm_9x", &output) == 2);
    CHECK(contains(output, "arch 'sm_9x' is not valid"));
    CHECK(mqajit::testing::run_command("MQAJIT_ARCH=bogus " + cli + " variants", &output) == 2);
    CHECK(contains(output, "MQAJIT_ARCH"));
    CHECK(mqajit::testing::run_command(cli + " variants --heads 32", &output) == 2);  // --head-dim missing
    CHECK(mqajit::testing::run_command(cli + " variants --arch sm_75", &output) == 1);
    CHECK(contains(output, "sm_75 has no registered variants"));
}
