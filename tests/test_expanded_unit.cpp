// `mqajit codegen --expand`: the whole translation unit, templates inlined (from codegen/templates/
// and the family's folder). For one variant of each family, the expanded text holds every template
// it includes exactly once and no include of one, and the family's compiler (NVRTC, clang-22)
// compiles it with no headers at all to a kernel with the same resources as the generated source
// with its headers (no GPU needed). The CLI prints the same text.

#include <doctest/doctest.h>

#include <string>

#include "codegen/expanded_unit.hpp"
#include "codegen/family_registry.hpp"
#include "codegen/kernel_family.hpp"
#include "mqajit/error.hpp"
#include "runtime/backend.hpp"
#include "runtime/compiler.hpp"
#include "runtime/kernel_request.hpp"
#include "tests/gpu_support.hpp"
#include "tests/support.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

using namespace mqajit;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

void check_expands_and_compiles_alone(const std::string& variant_name, const std::string& arch_name) {
    CAPTURE(variant_name);
    const Arch arch = Arch::parse(arch_name);
    const Variant variant = Variant::parse(variant_name);
    const GeneratedKernel kernel = kernel_family_for(variant).generate(variant, 32, 128, arch);
    const std::string expanded = expanded_unit(kernel);

    CHECK(count(expanded, "#include \"") == 0);
    CHECK(count(expanded, "#pragma once") == 0);
    int inlined = 0;
    for (const EmbeddedFile& header : kernel.headers) {
        const std::string begin = "// ---- begin " + std::string(header.name) + " ----\n";
        CAPTURE(header.name);
        CHECK(count(expanded, begin) <= 1);
        if (count(expanded, begin) == 1) ++inlined;
    }
    CHECK(inlined >= 2);  // the family's template and mqa_logits_params.cuh at least
    CHECK(expanded.find(kernel.kernel_name) != std::string::npos);

    MQAJIT_REQUIRE_BACKEND(arch.vendor);
    const Compiler* found = nullptr;
    try {
        found = &backend->compiler();
    } catch (const Error& e) {
        MQAJIT_SKIP(e.what());  // no NVRTC, no clang-22
    }
    const Compiler& compiler = *found;
    CompileRequest alone = compile_request_for(variant, 32, 128, arch);
    const CompileResult with_headers = compiler.compile(alone);
    alone.source = expanded;
    alone.headers = {};
    const CompileResult expanded_result = compiler.compile(alone);
    CHECK_FALSE(expanded_result.binary.empty());
    CHECK(expanded_result.usage.registers == with_headers.usage.registers);
    CHECK(expanded_result.usage.shared_bytes == with_headers.usage.shared_bytes);
    CHECK(expanded_result.usage.spill_store_bytes == with_headers.usage.spill_store_bytes);
}

}  // namespace

TEST_CASE("codegen --expand: an sm_90a wgmma kernel's unit compiles alone to the same kernel") {
    check_expands_and_compiles_alone("wgmma64x128x32_bkv128_r4_w2_lds4", "sm_90a");
}

TEST_CASE("codegen --expand: an sm_80 mma kernel's unit compiles alone to the same kernel") {
    check_expands_and_compiles_alone("mma16x8x16_bkv64_r2_w4_lds2", "sm_80");
}

TEST_CASE("codegen --expand: a gfx950 mfma kernel's unit compiles alone to the same kernel") {
    check_expands_and_compiles_alone("mfma32x32x64_bkv64_r1_w1_lds2", "gfx950");
}

TEST_CASE("codegen --expand: a gfx942 pmfma (decode) kernel's unit compiles alone to the same kernel") {
    check_expands_and_compiles_alone("pmfma16x16x32_bkv64_r2_w4_lds2", "gfx942");
}

TEST_CASE("codegen --expand: a second include of a template adds nothing, an unknown include stays") {
    constexpr EmbeddedFile kHeaders[] = {{"a.cuh", "  #  pragma   once\nint a;\n"},
                                         {"b.cuh", "#pragma once\n#include \"a.cuh\"\nint b;\n"}};
    GeneratedKernel kernel;
    kernel.source = " # include \"b.cuh\"  // spaces and a comment\n#include \"a.cuh\"\n#include \"other.h\"\n"
                    "#include <cuda.h>\nint main_unit;  // #pragma once in a comment stays\n";
    kernel.headers = kHeaders;
    CHECK(expanded_unit(kernel) ==
          "// ---- begin b.cuh ----\n"
          "// ---- begin a.cuh ----\n"
          "int a;\n"
          "// ---- end a.cuh ----\n"
          "int b;\n"
          "// ---- end b.cuh ----\n"
          "#include \"other.h\"\n"
          "#include <cuda.h>\n"
          "int main_unit;  // #pragma once in a comment stays\n");
}

TEST_CASE("codegen --expand: the CLI prints the expanded unit") {
    std::string output;
    const std::string variant = "wgmma64x128x32_bkv128_r4_w2_lds4";
    REQUIRE(testing::run_command(testing::cli_path().string() + " codegen " + variant + " --arch sm_90a --expand",
                                 &output) == 0);
    const Variant parsed = Variant::parse(variant);
    const GeneratedKernel kernel = family_for(parsed).generate(parsed, 32, 128, Arch::parse("sm_90a"));
    CHECK(output == expanded_unit(kernel));
}
