// The nvcc-built kernels (codegen/prebuilt/): the fatbin holds every baseline and the reference
// kernel, each baseline is instantiated from the sm80 family's baseline variant, and sm_90a gets the
// wgmma baseline. Built only with the CUDA backend (MQAJIT_WITH_CUDA).

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>

#include "codegen/families/sm80_mqa_logits/family.hpp"
#include "codegen/prebuilt.hpp"
#include "codegen/variant_registry.hpp"
#include "mqajit/error.hpp"
#include "tests/error_kind.hpp"

using mqajit::Arch;
using mqajit::ErrorKind;
using mqajit::Variant;

namespace {

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

}  // namespace

// ---- pre-built kernels -----------------------------------------------------------------------------

TEST_CASE("sm80 prebuilt: the fatbin holds every baseline and the reference kernel") {
    const std::span<const char> fatbin = mqajit::prebuilt_fatbin();
    REQUIRE(fatbin.size() > 1024);
    const std::string_view bytes(fatbin.data(), fatbin.size());
    for (int heads : {32, 64}) {
        for (int head_dim : {64, 128}) {
            const std::string name = mqajit::baseline_kernel_name(heads, head_dim);
            CHECK(name == fmt::format("mqa_logits_baseline_h{}_d{}", heads, head_dim));
            CHECK(contains(bytes, name));
        }
    }
    CHECK(contains(bytes, mqajit::kReferenceKernelName));
    CHECK(mqajit::testing::error_kind_of([] { mqajit::baseline_kernel_name(16, 128); }) == ErrorKind::unsupported);
}

TEST_CASE("sm80 prebuilt: each baseline kernel is instantiated from baseline_variant(heads)") {
    std::ifstream file(std::string(MQAJIT_SOURCE_DIR) + "/codegen/prebuilt/prebuilt_kernels.cu");
    REQUIRE(file.good());
    std::stringstream text;
    text << file.rdbuf();
    const std::string source = text.str();
    const std::regex line(R"(MQA_SM80_MQA_LOGITS_KERNEL\((\w+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\w+)\))");
    int found = 0;
    for (auto it = std::sregex_iterator(source.begin(), source.end(), line); it != std::sregex_iterator(); ++it) {
        const std::smatch& m = *it;
        const int heads = std::stoi(m[2]), head_dim = std::stoi(m[3]);
        CAPTURE(m[1].str());
        const Variant expected = mqajit::baseline_variant(heads);
        CHECK(m[1].str() == mqajit::baseline_kernel_name(heads, head_dim));
        CHECK(std::stoi(m[4]) == expected.bkv);
        CHECK(std::stoi(m[5]) == expected.rows);
        CHECK(std::stoi(m[6]) == expected.warps);
        CHECK(std::stoi(m[7]) == expected.stages);
        CHECK(m[8].str() == (expected.k == 32 ? "true" : "false"));
        ++found;
    }
    CHECK(found == 4);
}

TEST_CASE("prebuilt baseline: sm_90a gets the wgmma kernel, other archs the mma one, both in the fatbin") {
    const std::string_view fatbin(mqajit::prebuilt_fatbin().data(), mqajit::prebuilt_fatbin().size());
    for (int heads : {32, 64}) {
        for (int head_dim : {64, 128}) {
            const auto hopper = mqajit::prebuilt_baseline(Arch::parse("sm_90a"), heads, head_dim);
            const auto ampere = mqajit::prebuilt_baseline(Arch::parse("sm_80"), heads, head_dim);
            CHECK(ampere.variant == mqajit::baseline_variant(heads));
            CHECK(ampere.kernel_name == mqajit::baseline_kernel_name(heads, head_dim));
            CHECK(fatbin.find(ampere.kernel_name) != std::string_view::npos);
            if (mqajit::prebuilt_has_sm90a()) {
                CHECK(hopper.variant.op == mqajit::MatrixOp::wgmma);
                CHECK(mqajit::VariantRegistry::instance().supports(Arch::parse("sm_90a"), heads, head_dim, hopper.variant).ok);
                CHECK(hopper.kernel_name == fmt::format("mqa_logits_baseline_sm90_h{}_d{}", heads, head_dim));
                CHECK(fatbin.find(hopper.kernel_name) != std::string_view::npos);
            } else {
                CHECK(hopper.variant == ampere.variant);
            }
        }
    }
}
