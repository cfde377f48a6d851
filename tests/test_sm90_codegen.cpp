// The wgmma family without a GPU: every registered sm_90a variant, at every head count and head
// dimension it accepts, compiles under NVRTC without spills and without ptxas serializing its wgmma
// (which would silently remove the overlap the kernel is built around). How long a compile takes is
// measured by tests/benchmarks/bench_compile.cpp, not asserted here.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>

#include "runtime/kernel_request.hpp"
#include "runtime/backend.hpp"
#include "runtime/compiler.hpp"
#include "codegen/variant_registry.hpp"
#include "tests/gpu_support.hpp"
#include "tests/build_flags.hpp"

namespace {

using mqajit::Arch;
using mqajit::MatrixOp;
using mqajit::Variant;

void check_wgmma_variants_compile(int heads, int head_dim) {
    MQAJIT_REQUIRE_BACKEND(mqajit::Vendor::nvidia);
    const Arch arch = Arch::parse("sm_90a");
    const mqajit::Compiler& compiler = backend->compiler();
    int compiled = 0;
    for (const Variant& v : mqajit::VariantRegistry::instance().variants(arch, heads, head_dim)) {
        if (v.op != MatrixOp::wgmma) continue;
        CAPTURE(v.name());
        const mqajit::CompileRequest request = mqajit::compile_request_for(v, heads, head_dim, arch);
        CHECK(request.source.find("#include <") == std::string::npos);  // no CCCL or standard headers
        for (const auto& header : request.headers) {
            CHECK(header.text.find("#include <") == std::string_view::npos);
        }
        const mqajit::CompileResult result = compiler.compile(request);
        MESSAGE(fmt::format("{} h{} d{}: {} registers", v.name(), heads, head_dim, result.usage.registers));
        CHECK_FALSE(result.binary.empty());
        CHECK(result.usage.registers > 0);
        CHECK(result.usage.spill_store_bytes == 0);
        CHECK(result.usage.spill_load_bytes == 0);
        CHECK_FALSE(result.usage.wgmma_serialized);
        CHECK(result.log.find("serialized") == std::string::npos);
        ++compiled;
    }
    CHECK(compiled >= 8);
}

}  // namespace

TEST_CASE("sm90 codegen: wgmma variants at heads=32 head_dim=128 compile without spills or serialization") {
    check_wgmma_variants_compile(32, 128);
}
TEST_CASE("sm90 codegen: wgmma variants at heads=64 head_dim=128 compile without spills or serialization") {
    check_wgmma_variants_compile(64, 128);
}
TEST_CASE("sm90 codegen: wgmma variants at heads=32 head_dim=64 compile without spills or serialization") {
    check_wgmma_variants_compile(32, 64);
}
TEST_CASE("sm90 codegen: wgmma variants at heads=64 head_dim=64 compile without spills or serialization") {
    check_wgmma_variants_compile(64, 64);
}

TEST_CASE("ptxas log: a serialized-wgmma warning marks the kernel it names") {
    const std::string log =
        "ptxas info    : (C7518) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
        "program dependence on compiler-inserted WG.DP in divergent path in the function 'k_slow'\n"
        "ptxas info    : Compiling entry function 'k_slow' for 'sm_90a'\n"
        "ptxas info    : Function properties for k_slow\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 168 registers, used 1 barriers\n"
        "ptxas info    : Compiling entry function 'k_fast' for 'sm_90a'\n"
        "ptxas info    : Function properties for k_fast\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 96 registers, used 1 barriers\n";
    const mqajit::ResourceUsage slow = mqajit::parse_ptxas_usage(log, "k_slow");
    const mqajit::ResourceUsage fast = mqajit::parse_ptxas_usage(log, "k_fast");
    CHECK(slow.wgmma_serialized);
    CHECK(slow.registers == 168);
    CHECK_FALSE(fast.wgmma_serialized);
    CHECK(fast.registers == 96);
}
