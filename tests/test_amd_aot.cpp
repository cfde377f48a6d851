// `mqajit aot --arch gfx950|gfx942` compiles every registered AMD variant of both operators (mfma for
// mqa_logits, pmfma for paged_mqa_logits) at H = 32 and 64 (D = 128) with clang, into the disk cache,
// with no spills, no scratch and LDS within the arch's limit; the pmfma variants also at D = 64.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <optional>
#include <string>

#include "codegen/families/gfx9_mqa_logits/family.hpp"
#include "codegen/families/gfx9_paged_mqa_logits/family.hpp"
#include "mqajit/error.hpp"
#include "runtime/compiler_clang_hip.hpp"
#include "tests/support.hpp"
#include "codegen/variant_registry.hpp"

using namespace mqajit;

namespace {

// Why clang-22 cannot be used here, or nothing.
std::optional<std::string> clang_missing() {
    try {
        ClangHipCompiler compiler;
        return std::nullopt;
    } catch (const Error& e) {
        return e.what();
    }
}

void check_aot_builds_every_variant(const std::string& arch_name) {
    if (const auto why = clang_missing()) MQAJIT_SKIP(*why);
    const mqajit::testing::TempDir cache("amd-aot");
    const std::string command = "MQAJIT_CACHE_DIR=" + cache.path().string() + " " +
                                mqajit::testing::cli_path().string() + " aot --arch " + arch_name +
                                " --heads 32 64 --head-dim 128 --json";
    std::string output;
    const int exit_code = mqajit::testing::run_command(command, &output);
    INFO(output.substr(0, 4000));
    REQUIRE(exit_code == 0);
    // NOTES: the progress lines ("[k/n] ...") come first, on stderr; the JSON array is the output's end.
    const nlohmann::json rows = nlohmann::json::parse(output.substr(output.find("[\n")));

    const Arch arch = Arch::parse(arch_name);
    std::set<std::string> expected;
    int paged = 0;
    for (int heads : {32, 64}) {
        for (const Variant& v : VariantRegistry::instance().variants(arch, heads, 128)) {
            if (v.op == MatrixOp::mfma) expected.insert(v.name() + "_h" + std::to_string(heads));
        }
        for (const Variant& v : VariantRegistry::for_op(KernelOp::paged_mqa_logits).variants(arch, heads, 128)) {
            REQUIRE(v.op == MatrixOp::pmfma);
            expected.insert(v.name() + "_h" + std::to_string(heads));
            ++paged;
        }
    }
    REQUIRE(expected.size() > 100);
    CHECK(paged >= 32);

    std::set<std::string> built;
    for (const auto& row : rows) {
        const std::string name = row.at("variant").get<std::string>() + "_h" + std::to_string(row.at("heads").get<int>());
        CAPTURE(name);
        CHECK(row.at("status") == "built");
        CHECK(row.at("registers").get<int>() > 0);
        CHECK(row.at("sgprs").get<int>() > 0);
        CHECK(row.at("vgpr_spills").get<int>() == 0);
        CHECK(row.at("sgpr_spills").get<int>() == 0);
        CHECK(row.at("scratch_bytes").get<int>() == 0);
        CHECK(row.at("shared_bytes").get<std::size_t>() <= gfx9_max_lds_bytes(arch));
        const Variant v = Variant::parse(row.at("variant").get<std::string>());
        if (v.op == MatrixOp::pmfma) {
            const int heads = row.at("heads").get<int>();
            MESSAGE(name << ": " << row.at("registers").get<int>() << " VGPRs (estimate " << pmfma_vgpr_estimate(v, heads, 128)
                         << "), " << row.at("agprs").get<int>() << " AGPRs, " << row.at("sgprs").get<int>() << " SGPRs, "
                         << row.at("shared_bytes").get<std::size_t>() << " B LDS");
            CHECK(row.at("shared_bytes").get<std::size_t>() == static_cast<std::size_t>(pmfma_lds_bytes(v, heads, 128)));
        }
        built.insert(name);
    }
    CHECK(built == expected);

    // A second run finds the code objects in the cache, with the AMD usage kept in meta.json.
    const std::string one = "MQAJIT_CACHE_DIR=" + cache.path().string() + " " + mqajit::testing::cli_path().string() +
                            " aot --arch " + arch_name + " --heads 32 --head-dim 128 --json --variants " +
                            rows.at(0).at("variant").get<std::string>();
    REQUIRE(mqajit::testing::run_command(one, &output) == 0);
    const nlohmann::json again = nlohmann::json::parse(output.substr(output.find("[\n")));
    REQUIRE(again.size() == 1);
    CHECK(again[0].at("status") == "cached");
    CHECK(again[0].at("registers") == rows.at(0).at("registers"));
    CHECK(again[0].at("sgprs") == rows.at(0).at("sgprs"));
    CHECK(again[0].at("vgpr_spills") == 0);
}

// The decode variants at head_dim 64 (the default run builds D = 128): named one by one, so only they
// are built.
void check_aot_builds_paged_variants_at_head_dim_64(const std::string& arch_name) {
    if (const auto why = clang_missing()) MQAJIT_SKIP(*why);
    const Arch arch = Arch::parse(arch_name);
    std::set<std::string> expected;
    std::string names;
    for (int heads : {32, 64}) {
        for (const Variant& v : VariantRegistry::for_op(KernelOp::paged_mqa_logits).variants(arch, heads, 64)) {
            expected.insert(v.name() + "_h" + std::to_string(heads));
            if (names.find(v.name()) == std::string::npos) names += " " + v.name();
        }
    }
    REQUIRE(expected.size() >= 20);
    const mqajit::testing::TempDir cache("amd-aot-paged");
    const std::string command = "MQAJIT_CACHE_DIR=" + cache.path().string() + " " +
                                mqajit::testing::cli_path().string() + " aot --arch " + arch_name +
                                " --heads 32 64 --head-dim 64 --json --variants" + names;
    std::string output;
    const int exit_code = mqajit::testing::run_command(command, &output);
    INFO(output.substr(0, 4000));
    REQUIRE(exit_code == 0);
    std::set<std::string> built;
    for (const auto& row : nlohmann::json::parse(output.substr(output.find("[\n")))) {
        const std::string name = row.at("variant").get<std::string>() + "_h" + std::to_string(row.at("heads").get<int>());
        CAPTURE(name);
        CHECK(row.at("status") == "built");
        CHECK(row.at("head_dim") == 64);
        CHECK(row.at("vgpr_spills").get<int>() == 0);
        CHECK(row.at("scratch_bytes").get<int>() == 0);
        built.insert(name);
    }
    CHECK(built == expected);
}

}  // namespace

TEST_CASE("amd aot: gfx950 builds every mfma and pmfma variant at 32 and 64 heads without spills") {
    check_aot_builds_every_variant("gfx950");
}

TEST_CASE("amd aot: gfx942 builds every mfma and pmfma variant at 32 and 64 heads without spills") {
    check_aot_builds_every_variant("gfx942");
}

TEST_CASE("amd aot: gfx950 builds every pmfma variant at head_dim 64 without spills") {
    check_aot_builds_paged_variants_at_head_dim_64("gfx950");
}

TEST_CASE("amd aot: gfx942 builds every pmfma variant at head_dim 64 without spills") {
    check_aot_builds_paged_variants_at_head_dim_64("gfx942");
}
