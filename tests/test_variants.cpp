// Variant grammar, arch names, and the registry's rules per family. The CLI: test_variants_cli.cpp.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "codegen/families/sm80_mqa_logits/family.hpp"
#include "codegen/variant_registry.hpp"
#include "mqajit/error.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace {

using mqajit::Arch;
using mqajit::ErrorKind;
using mqajit::MatrixOp;
using mqajit::Variant;
using mqajit::VariantRegistry;
using mqajit::Vendor;

const VariantRegistry& registry() { return VariantRegistry::instance(); }

// The message of the invalid_argument Error that `fn` throws; fails the test when it throws nothing.
template <typename Fn>
std::string invalid_argument_message(Fn&& fn) {
    try {
        fn();
    } catch (const mqajit::Error& e) {
        CHECK(e.kind() == ErrorKind::invalid_argument);
        return e.what();
    }
    FAIL("expected mqajit::Error(invalid_argument)");
    return {};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<std::string> names_of(const std::vector<Variant>& variants) {
    std::vector<std::string> names;
    for (const Variant& v : variants) names.push_back(v.name());
    return names;
}

bool is_registered(const std::string& arch, const std::string& name) {
    const std::vector<std::string> names = names_of(registry().variants(Arch::parse(arch)));
    return std::ranges::find(names, name) != names.end();
}

mqajit::Support supports(const std::string& arch, int heads, int head_dim, const std::string& name) {
    return registry().supports(Arch::parse(arch), heads, head_dim, Variant::parse(name));
}

}  // namespace

TEST_CASE("Arch::parse accepts NVIDIA names and canonicalises them") {
    const Arch sm90a = Arch::parse("sm_90a");
    CHECK(sm90a.name == "sm_90a");
    CHECK(sm90a.vendor == Vendor::nvidia);
    CHECK(sm90a.number == 90);
    CHECK(sm90a.arch_specific);
    CHECK(sm90a.features.empty());
    CHECK(Arch::parse("sm90a") == sm90a);
    CHECK(Arch::parse("SM_90A") == sm90a);

    const Arch sm89 = Arch::parse("sm_89");
    CHECK(sm89.name == "sm_89");
    CHECK(sm89.number == 89);
    CHECK_FALSE(sm89.arch_specific);
    CHECK(Arch::parse("sm80").name == "sm_80");
    CHECK(Arch::parse("sm_86").number == 86);
    CHECK(Arch::parse("sm_100a").number == 100);
    CHECK(Arch::parse("sm_100a").arch_specific);
    CHECK(Arch::parse("sm_120").name == "sm_120");
}

TEST_CASE("Arch::parse accepts AMD names and keeps feature flags apart") {
    const Arch gfx950 = Arch::parse("gfx950");
    CHECK(gfx950.name == "gfx950");
    CHECK(gfx950.vendor == Vendor::amd);
    CHECK(gfx950.number == 950);
    CHECK(gfx950.features.empty());
    CHECK(gfx950.target_id() == "gfx950");
    CHECK(Arch::parse("gfx942").number == 942);
    CHECK(Arch::parse("gfx90a").name == "gfx90a");
    CHECK(Arch::parse("gfx90a").number == 910);
    CHECK(Arch::parse("gfx1100").number == 1100);

    const Arch with_features = Arch::parse("gfx942:sramecc+:xnack-");
    CHECK(with_features.name == "gfx942");
    CHECK(with_features.number == 942);
    CHECK(with_features.features == std::vector<std::string>{"sramecc+", "xnack-"});
    CHECK(with_features.target_id() == "gfx942:sramecc+:xnack-");
    CHECK(Arch::parse("gfx942:xnack-:sramecc+") == with_features);
    CHECK_FALSE(Arch::parse("gfx942:xnack+") == with_features);
}

TEST_CASE("Arch::parse rejects malformed names and names the accepted forms") {
    for (const char* bad : {"", "sm_", "sm_9", "sm_9x", "sm_090", "sm_1000", "sm_90b", "sm_90a:xnack+", "cuda",
                            "90a", "gfx", "gfx95", "gfx09a", "gfx9500a", "gfx95g", "gfx942:", "gfx942:xnack",
                            "gfx942:xnack+:xnack-", "gfx942::xnack+", " sm_90a"}) {
        CAPTURE(bad);
        const std::string message = invalid_argument_message([&] { Arch::parse(bad); });
        CHECK(contains(message, "accepted forms"));
        CHECK(contains(message, "sm_90a"));
        CHECK(contains(message, "gfx950"));
    }
    CHECK(contains(invalid_argument_message([] { Arch::parse("gfx942:xnack+:xnack-"); }), "'xnack' is given twice"));
}

TEST_CASE("to_string names vendors and matrix ops") {
    CHECK(mqajit::to_string(Vendor::nvidia) == "nvidia");
    CHECK(mqajit::to_string(Vendor::amd) == "amd");
    CHECK(mqajit::to_string(MatrixOp::wgmma) == "wgmma");
    CHECK(mqajit::to_string(MatrixOp::mma) == "mma");
    CHECK(mqajit::to_string(MatrixOp::mfma) == "mfma");
}

TEST_CASE("Variant::parse reads every field") {
    const Variant v = Variant::parse("wgmma64x128x32_bkv128_r4_w2_lds3");
    CHECK(v.op == MatrixOp::wgmma);
    CHECK(v.m == 64);
    CHECK(v.n == 128);
    CHECK(v.k == 32);
    CHECK(v.bkv == 128);
    CHECK(v.rows == 4);
    CHECK(v.warps == 2);
    CHECK(v.stages == 3);

    const Variant no_stages = Variant::parse("mfma16x16x128_bkv64_r1_w4");
    CHECK(no_stages.op == MatrixOp::mfma);
    CHECK(no_stages.stages == 0);
    CHECK(no_stages.name() == "mfma16x16x128_bkv64_r1_w4");

    for (const char* name : {"mma16x8x16_bkv64_r4_w4_lds1", "wgmma64x128x32_bkv64_r4_w2", "mfma32x32x64_bkv128_r1_w1_lds3",
                             "mma1000000x9999999x1_bkv1_r1_w1_lds10"}) {
        CAPTURE(name);
        CHECK(Variant::parse(name).name() == name);
    }
    CHECK(Variant::parse("mma16x8x16_bkv64_r4_w4_lds1").stages == 1);

    const Variant built{.op = MatrixOp::mma, .m = 16, .n = 8, .k = 32, .bkv = 64, .rows = 2, .warps = 4, .stages = 3};
    CHECK(built.name() == "mma16x8x32_bkv64_r2_w4_lds3");
    CHECK(Variant::parse(built.name()) == built);
}

TEST_CASE("every registered name round-trips on every arch") {
    const std::vector<std::string> archs = registry().archs();
    REQUIRE_FALSE(archs.empty());
    std::size_t num_checked = 0;
    for (const std::string& arch_name : archs) {
        CAPTURE(arch_name);
        const std::vector<Variant> variants = registry().variants(Arch::parse(arch_name));
        CHECK_FALSE(variants.empty());
        for (const Variant& variant : variants) {
            const std::string name = variant.name();
            CAPTURE(name);
            CHECK(Variant::parse(name) == variant);
            CHECK(Variant::parse(name).name() == name);
            ++num_checked;
        }
    }
    CHECK(num_checked > 100);
}

TEST_CASE("Variant::parse rejects malformed names and says which field is wrong") {
    struct BadName {
        const char* name;
        const char* expected;
    };
    const BadName cases[] = {
        {"", "empty"},
        {"wgmma64x128x32_bkvX_r4_w2_lds3", "field 'bkv' must be a positive integer, got 'X'"},
        {"tensor64x128x32_bkv64_r4_w2_lds3", "unknown op 'tensor'"},
        {"64x128x32_bkv64_r4_w2_lds3", "unknown op ''"},
        {"WGMMA64x128x32_bkv64_r4_w2_lds3", "unknown op 'WGMMA'"},
        {"wgmma64x128_bkv64_r4_w2_lds3", "must be <M>x<N>x<K>"},
        {"wgmma64x128x32x8_bkv64_r4_w2_lds3", "must be <M>x<N>x<K>"},
        {"wgmmax128x32_bkv64_r4_w2_lds3", "field 'M' must be a positive integer, got ''"},
        {"wgmma64x0x32_bkv64_r4_w2_lds3", "field 'N' must be a positive integer, got '0'"},
        {"wgmma64x128x032_bkv64_r4_w2_lds3", "field 'K' must be written without leading zeros, got '032'"},
        {"wgmma64x128x32junk_bkv64_r4_w2_lds3", "field 'K' must be a positive integer, got '32junk'"},
        {"wgmma64x128x32_bkv064_r4_w2_lds3", "field 'bkv' must be written without leading zeros"},
        {"wgmma64x128x32_bkv64_r0_w2_lds3", "field 'r' must be a positive integer, got '0'"},
        {"wgmma64x128x32_bkv64_r4_w-2_lds3", "field 'w' must be a positive integer, got '-2'"},
        {"wgmma64x128x32_bkv64_r4_w2_lds", "field 'lds' must be a positive integer, got ''"},
        {"wgmma64x128x32_bkv64_r4_w2_lds0", "field 'lds' must be a positive integer, got '0'"},
        {"wgmma64x128x32_bkv64_r4_w2_lds3junk", "field 'lds' must be a positive integer, got '3junk'"},
        {"wgmma64x128x32_bkv64_r4_w2_lds3_", "empty field"},
        {"wgmma64x128x32_bkv64__r4_w2_lds3", "empty field"},
        {"wgmma64x128x32_bkv64_r4_w2_lds3_x7", "unknown field 'x7'"},
        {"wgmma64x128x32_bkv64_r4_w2_stages3", "unknown field 'stages3'"},
        {"wgmma64x128x32_r4_w2_lds3", "field 'bkv' is missing"},
        {"wgmma64x128x32_bkv64_w2_lds3", "field 'r' is missing"},
        {"wgmma64x128x32_bkv64_r4", "field 'w' is missing"},
        {"wgmma64x128x32", "field 'bkv' is missing"},
        {"wgmma64x128x32_bkv64_bkv64_r4_w2", "field 'bkv' appears twice"},
        {"wgmma64x128x32_bkv64_r4_w2_lds3_lds3", "field 'lds' appears twice"},
        {"wgmma64x128x32_r4_bkv64_w2_lds3", "field 'bkv' is out of order"},
        {"wgmma64x128x32_bkv64_r4_lds3_w2", "field 'w' is out of order"},
        {"wgmma64x128x32_bkv64_r99999999_w2", "field 'r' must be a positive integer, got '99999999'"},
    };
    for (const BadName& bad : cases) {
        CAPTURE(bad.name);
        const std::string message = invalid_argument_message([&] { Variant::parse(bad.name); });
        CHECK(contains(message, bad.expected));
        CHECK(contains(message, std::string("variant '") + bad.name + "'"));
        CHECK(contains(message, "<op><M>x<N>x<K>_bkv<B>_r<R>_w<W>[_lds<S>]"));
    }
}

TEST_CASE("registry lists known archs in a stable order without duplicates") {
    const std::vector<std::string> archs = registry().archs();
    for (const char* expected : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120", "gfx942", "gfx950"}) {
        CHECK(std::ranges::find(archs, expected) != archs.end());
    }
    CHECK(std::set<std::string>(archs.begin(), archs.end()).size() == archs.size());
    CHECK(std::ranges::find(archs, "sm_80") < std::ranges::find(archs, "sm_90a"));
    CHECK(std::ranges::find(archs, "sm_120") < std::ranges::find(archs, "gfx942"));

    for (const std::string& arch : archs) {
        CAPTURE(arch);
        const std::vector<std::string> names = names_of(registry().variants(Arch::parse(arch)));
        CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
        CHECK(names == names_of(registry().variants(Arch::parse(arch))));
    }
    CHECK(registry().variants(Arch::parse("sm_75")).empty());
    CHECK(registry().variants(Arch::parse("gfx90a")).empty());
}

TEST_CASE("each arch registers exactly its families") {
    auto ops_of = [](const char* arch) {
        std::set<std::string> ops;
        for (const Variant& v : registry().variants(Arch::parse(arch))) {
            ops.insert(std::string(mqajit::to_string(v.op)) + std::to_string(v.m) + "x" + std::to_string(v.n) + "x" +
                       std::to_string(v.k));
        }
        return ops;
    };
    using Ops = std::set<std::string>;
    CHECK(ops_of("sm_80") == Ops{"mma16x8x16"});
    CHECK(ops_of("sm_86") == Ops{"mma16x8x16"});
    CHECK(ops_of("sm_89") == Ops{"mma16x8x16", "mma16x8x32"});
    CHECK(ops_of("sm_90") == Ops{"mma16x8x16", "mma16x8x32"});
    CHECK(ops_of("sm_90a") == Ops{"wgmma64x64x32", "wgmma64x128x32", "wgmma64x256x32", "mma16x8x16", "mma16x8x32"});
    CHECK(ops_of("sm_100a") == Ops{"mma16x8x16", "mma16x8x32"});
    CHECK(ops_of("gfx950") == Ops{"mfma32x32x64", "mfma16x16x128"});
    CHECK(ops_of("gfx942") == Ops{"mfma32x32x16", "mfma16x16x32"});
    // The full product: 2 instructions x bkv{64,128} x r{1,2,4} x w{1,2,4} x lds{2,3}.
    CHECK(registry().variants(Arch::parse("gfx950")).size() == 72);
    CHECK(registry().variants(Arch::parse("gfx942:sramecc+:xnack-")).size() == 72);
    // 14 wgmma for 32 heads + 14 twins for 64 (the w4 twins need N=128 so r2 at 64 heads), then 6 mma + 6 twins.
    CHECK(registry().variants(Arch::parse("sm_90a")).size() == 40);
    CHECK(registry().variants(Arch::parse("sm_80")).size() == 2);
}

TEST_CASE("every variant of the shipped gfx950 table is registered and runs at GLM-5 and DeepSeek sizes") {
    for (const char* name : {"mfma32x32x64_bkv64_r1_w2_lds2", "mfma32x32x64_bkv64_r2_w2_lds3",
                             "mfma32x32x64_bkv128_r2_w4_lds3", "mfma32x32x64_bkv64_r2_w2_lds2",
                             "mfma32x32x64_bkv64_r2_w4_lds3", "mfma32x32x64_bkv128_r2_w4_lds2"}) {
        CAPTURE(name);
        CHECK(is_registered("gfx950", name));
        CHECK_FALSE(is_registered("gfx942", name));
        CHECK(supports("gfx950", 32, 128, name).ok);
        CHECK(supports("gfx950", 64, 128, name).ok);
    }
}

TEST_CASE("registered wgmma and mma names, and their 64-head twins") {
    for (const char* name : {"wgmma64x128x32_bkv64_r4_w2_lds4", "wgmma64x128x32_bkv128_r4_w2_lds6",
                             "wgmma64x128x32_bkv128_r4_w2_lds4", "wgmma64x128x32_bkv64_r4_w3_lds6",
                             "wgmma64x128x32_bkv128_r4_w1_lds4", "wgmma64x128x32_bkv64_r4_w2_lds8",
                             "wgmma64x64x32_bkv128_r2_w2_lds4", "wgmma64x64x32_bkv64_r2_w3_lds6",
                             "wgmma64x256x32_bkv64_r8_w2_lds4", "wgmma64x256x32_bkv64_r8_w1_lds4"}) {
        CAPTURE(name);
        Variant twin = Variant::parse(name);
        twin.rows /= 2;
        CHECK(is_registered("sm_90a", name));
        CHECK(is_registered("sm_90a", twin.name()));
        CHECK(supports("sm_90a", 32, 128, name).ok);
        CHECK(supports("sm_90a", 64, 128, twin.name()).ok);
        CHECK_FALSE(supports("sm_90a", 64, 128, name).ok);
    }
    for (const char* name : {"mma16x8x16_bkv64_r4_w4_lds2", "mma16x8x32_bkv64_r4_w4_lds2",
                             "mma16x8x32_bkv128_r4_w4_lds3", "mma16x8x32_bkv64_r2_w4_lds3",
                             "mma16x8x32_bkv128_r4_w8_lds2", "mma16x8x32_bkv64_r4_w2_lds3"}) {
        CAPTURE(name);
        Variant twin = Variant::parse(name);
        twin.rows /= 2;
        for (const char* arch : {"sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120"}) {
            CAPTURE(arch);
            CHECK(is_registered(arch, name));
            CHECK(is_registered(arch, twin.name()));
            CHECK(supports(arch, 32, 128, name).ok);
            CHECK(supports(arch, 64, 128, twin.name()).ok);
        }
    }
}

TEST_CASE("baseline_variant is the registered mma16x8x16 variant for each head count") {
    CHECK(mqajit::baseline_variant(32).name() == "mma16x8x16_bkv64_r4_w4_lds2");
    CHECK(mqajit::baseline_variant(64).name() == "mma16x8x16_bkv64_r2_w4_lds2");
    for (int heads : {32, 64}) {
        for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90a", "sm_120"}) {
            CAPTURE(arch);
            for (int head_dim : {64, 128}) {
                const auto support = registry().supports(Arch::parse(arch), heads, head_dim, mqajit::baseline_variant(heads));
                CHECK_MESSAGE(support.ok, support.reason);
            }
        }
    }
    try {
        mqajit::baseline_variant(48);
        FAIL("baseline_variant(48) should throw");
    } catch (const mqajit::Error& e) {
        CHECK(e.kind() == ErrorKind::unsupported);
        CHECK(contains(e.what(), "heads=48"));
    }
}

TEST_CASE("wgmma rules give precise reasons") {
    CHECK(supports("sm_90a", 32, 128, "wgmma64x128x32_bkv128_r4_w2_lds4").ok);
    CHECK(supports("sm_90a", 32, 128, "wgmma64x128x32_bkv128_r4_w2_lds4").reason.empty());
    CHECK(supports("sm_90a", 32, 64, "wgmma64x128x32_bkv128_r4_w2_lds4").ok);
    // A stage must always serve the same math warpgroup (mbarrier parity waits).
    CHECK(supports("sm_90a", 32, 128, "wgmma64x128x32_bkv128_r4_w2_lds3").reason ==
          "lds 3 must be a multiple of w 2 (each stage serves one math warpgroup)");
    CHECK(contains(supports("sm_90a", 32, 128, "wgmma64x128x32_bkv64_r4_w3_lds4").reason, "multiple of w 3"));

    CHECK(supports("sm_89", 32, 128, "wgmma64x128x32_bkv64_r4_w2_lds4").reason ==
          "wgmma needs sm_90a; this device is sm_89 (use an mma variant)");
    CHECK(contains(supports("sm_90", 32, 128, "wgmma64x128x32_bkv64_r4_w2_lds4").reason, "this device is sm_90"));
    CHECK(contains(supports("sm_100a", 32, 128, "wgmma64x128x32_bkv64_r4_w2_lds4").reason, "wgmma needs sm_90a"));
    CHECK(contains(supports("gfx950", 32, 128, "wgmma64x128x32_bkv64_r4_w2_lds4").reason, "wgmma needs sm_90a"));
    CHECK(supports("sm_90a", 64, 128, "wgmma64x128x32_bkv64_r4_w2_lds4").reason ==
          "N=128 must equal r x heads = 4 x 64 = 256");
    CHECK(contains(supports("sm_90a", 48, 128, "wgmma64x128x32_bkv64_r4_w2_lds4").reason, "got heads=48"));
    CHECK(contains(supports("sm_90a", 32, 96, "wgmma64x128x32_bkv64_r4_w2_lds4").reason, "got head_dim=96"));
    CHECK(contains(supports("sm_90a", 32, 128, "wgmma128x128x32_bkv64_r4_w2_lds4").reason, "M=128"));
    CHECK(contains(supports("sm_90a", 32, 128, "wgmma64x128x16_bkv64_r4_w2_lds4").reason, "K=16"));
    CHECK(contains(supports("sm_90a", 32, 128, "wgmma64x128x32_bkv256_r4_w2_lds4").reason, "bkv"));
    CHECK(supports("sm_90a", 32, 128, "wgmma64x128x32_bkv64_r4_w4_lds4").ok);
    CHECK(contains(supports("sm_90a", 32, 128, "wgmma64x128x32_bkv64_r4_w5_lds4").reason, "1..4"));
    CHECK(contains(supports("sm_90a", 32, 128, "wgmma64x128x32_bkv128_r4_w4_lds4").reason, "w4"));
    CHECK(contains(supports("sm_90a", 32, 128, "wgmma64x64x32_bkv64_r2_w4_lds4").reason, "N=128"));
    CHECK(contains(supports("sm_90a", 32, 128, "wgmma64x128x32_bkv64_r4_w2").reason, "needs _lds<S>"));
    CHECK(contains(supports("sm_90a", 32, 128, "wgmma64x128x32_bkv64_r4_w2_lds9").reason, "2..8"));
    CHECK(contains(supports("sm_90a", 32, 128, "wgmma64x128x32_bkv64_r4_w2_lds1").reason, "2..8"));
    // (128/64) x 256/2 = 256 accumulator registers.
    CHECK(contains(supports("sm_90a", 32, 128, "wgmma64x256x32_bkv128_r8_w2_lds2").reason, "= 256 registers"));
    // Passes every rule but is not in the list.
    CHECK(supports("sm_90a", 32, 128, "wgmma64x128x32_bkv64_r4_w2_lds2").reason ==
          "not registered for sm_90a; `mqajit variants --arch sm_90a` lists the registered ones");
}

TEST_CASE("mma rules give precise reasons") {
    CHECK(supports("sm_80", 32, 128, "mma16x8x16_bkv64_r4_w4_lds2").ok);
    CHECK(supports("sm_80", 32, 128, "mma16x8x32_bkv64_r4_w4_lds2").reason ==
          "mma16x8x32 (native e4m3 mma.sync) needs sm_89 or newer; this device is sm_80 (use mma16x8x16)");
    CHECK(contains(supports("sm_86", 32, 128, "mma16x8x32_bkv64_r4_w4_lds2").reason, "this device is sm_86"));
    CHECK(contains(supports("sm_75", 32, 128, "mma16x8x16_bkv64_r4_w4_lds2").reason,
                   "mma needs an NVIDIA GPU of sm_80 or newer; this device is sm_75"));
    CHECK(contains(supports("gfx950", 32, 128, "mma16x8x16_bkv64_r4_w4_lds2").reason, "this device is gfx950"));
    CHECK(contains(supports("sm_89", 40, 128, "mma16x8x32_bkv64_r4_w4_lds2").reason, "got heads=40"));
    CHECK(contains(supports("sm_89", 32, 256, "mma16x8x32_bkv64_r4_w4_lds2").reason, "got head_dim=256"));
    CHECK(contains(supports("sm_89", 32, 128, "mma16x16x32_bkv64_r4_w4_lds2").reason, "got 16x16x32"));
    CHECK(contains(supports("sm_89", 32, 128, "mma16x8x32_bkv64_r4_w4").reason, "needs _lds<S>"));
    CHECK(contains(supports("sm_89", 32, 128, "mma16x8x32_bkv64_r4_w4_lds5").reason, "1..4"));
    CHECK(supports("sm_89", 32, 128, "mma16x8x32_bkv64_r4_w8_lds2").reason ==
          "each warp owns bkv / w = 64 / 8 KV rows, which must be a positive multiple of 16");
    CHECK(contains(supports("sm_89", 32, 128, "mma16x8x32_bkv64_r4_w3_lds2").reason, "64 / 3"));
    CHECK(contains(supports("sm_89", 32, 128, "mma16x8x32_bkv64_r4_w128_lds2").reason, "64 / 128"));
    // (128/4/16) x (4*64/8) x 4 = 256 floats.
    CHECK(contains(supports("sm_89", 64, 128, "mma16x8x32_bkv128_r4_w4_lds3").reason, "= 256 floats per thread"));
    CHECK(supports("sm_89", 32, 128, "mma16x8x32_bkv64_r4_w4_lds4").reason ==
          "not registered for sm_89; `mqajit variants --arch sm_89` lists the registered ones");
}

TEST_CASE("mfma rules give precise reasons") {
    CHECK(supports("gfx950", 32, 128, "mfma16x16x128_bkv128_r4_w2_lds3").ok);
    CHECK(supports("gfx942:sramecc+:xnack-", 32, 128, "mfma16x16x32_bkv64_r1_w1_lds2").ok);
    CHECK(supports("gfx950", 32, 128, "mfma32x32x16_bkv64_r2_w2_lds2").reason ==
          "mfma32x32x16 is not an fp8 MFMA of gfx950; it runs mfma32x32x64 or mfma16x16x128");
    CHECK(contains(supports("gfx942", 32, 128, "mfma32x32x64_bkv64_r2_w2_lds2").reason,
                   "it runs mfma32x32x16 or mfma16x16x32"));
    CHECK(supports("gfx90a", 32, 128, "mfma32x32x64_bkv64_r2_w2_lds2").reason ==
          "mfma fp8 kernels need gfx942 or gfx950; this device is gfx90a");
    CHECK(contains(supports("sm_90a", 32, 128, "mfma32x32x64_bkv64_r2_w2_lds2").reason, "this device is sm_90a"));
    CHECK(contains(supports("gfx950", 16, 128, "mfma32x32x64_bkv64_r2_w2_lds2").reason, "got heads=16"));
    CHECK(contains(supports("gfx950", 32, 128, "mfma32x32x64_bkv32_r2_w2_lds2").reason, "bkv (KV columns per tile) must be 64, 128; got 32"));
    CHECK(contains(supports("gfx950", 32, 128, "mfma32x32x64_bkv64_r3_w2_lds2").reason, "r (query rows per wave) must be 1, 2, 4"));
    CHECK(contains(supports("gfx950", 32, 128, "mfma32x32x64_bkv64_r2_w8_lds2").reason, "w (waves per block)"));
    CHECK(contains(supports("gfx950", 32, 128, "mfma32x32x64_bkv64_r2_w2_lds4").reason, "must be 2, 3; got 4"));
    CHECK(contains(supports("gfx950", 32, 128, "mfma32x32x64_bkv64_r2_w2").reason, "needs _lds<S>"));
}

TEST_CASE("shared memory limits: mma 99 KiB, mfma per arch") {
    // NOTES: wgmma's 227 KiB cannot be reached with its other rules at head_dim <= 128 (largest: 164864 B).
    CHECK(supports("sm_90a", 32, 128, "wgmma64x128x32_bkv128_r4_w2_lds8").reason.find("shared memory") ==
          std::string::npos);
    // mma: the template's layout, 4*256*128 + 1*32*128 operands plus the result staging tile,
    // weights and windows; the rule and the launch use the same function.
    const Variant big = Variant::parse("mma16x8x16_bkv256_r1_w16_lds4");
    CHECK(mqajit::sm80_shared_bytes(big, 32, 128) > 135168);
    CHECK(supports("sm_80", 32, 128, big.name()).reason ==
          fmt::format("shared memory {} B exceeds 101376 B (99 KiB); lower lds, bkv or r",
                      mqajit::sm80_shared_bytes(big, 32, 128)));
    CHECK(supports("sm_80", 32, 64, big.name()).reason.find("shared memory") == std::string::npos);  // ~68 KB at D 64
    // mfma: 3*128*128 + 4*4*64*128 = 180224 B.
    CHECK(supports("gfx942", 64, 128, "mfma32x32x16_bkv128_r4_w4_lds3").reason ==
          "LDS 180224 B exceeds 65536 B (64 KiB on gfx942); lower lds, bkv, r or w");
    CHECK(supports("gfx950", 64, 128, "mfma32x32x64_bkv128_r4_w4_lds3").reason ==
          "LDS 180224 B exceeds 163840 B (160 KiB on gfx950); lower lds, bkv, r or w");
    CHECK(supports("gfx950", 32, 128, "mfma32x32x64_bkv128_r4_w4_lds3").ok);  // 49152 + 65536 B
}

TEST_CASE("variants(arch, heads, head_dim) is exactly the registered ones that supports() accepts") {
    for (const std::string& arch_name : registry().archs()) {
        const Arch arch = Arch::parse(arch_name);
        for (int heads : {32, 64}) {
            for (int head_dim : {64, 128}) {
                CAPTURE(arch_name);
                CAPTURE(heads);
                CAPTURE(head_dim);
                const std::vector<Variant> runnable = registry().variants(arch, heads, head_dim);
                CHECK_FALSE(runnable.empty());
                for (const Variant& variant : registry().variants(arch)) {
                    const bool listed = std::ranges::find(runnable, variant) != runnable.end();
                    const auto support = registry().supports(arch, heads, head_dim, variant);
                    CHECK(listed == support.ok);
                    CHECK(support.ok == support.reason.empty());
                }
            }
        }
        CHECK(registry().variants(arch, 48, 128).empty());
    }
    // gfx942's 64 KiB leaves out the big tiles at 64 heads.
    CHECK(registry().variants(Arch::parse("gfx942"), 64, 128).size() < registry().variants(Arch::parse("gfx942")).size());
}
