// The paged_mqa_logits (decode) variants: the pwgmma op in the grammar and the rules that say
// whether one can run at a decode shape (codegen/paged_variant_support.hpp).

#include <doctest/doctest.h>

#include <string>

#include "codegen/families/sm90_paged_mqa_logits/family.hpp"
#include "codegen/paged_variant_support.hpp"
#include "codegen/variant_registry.hpp"
#include "mqajit/error.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace {

using mqajit::Arch;
using mqajit::MatrixOp;
using mqajit::PagedProblem;
using mqajit::Variant;

const Arch kHopper = Arch::parse("sm_90a");

PagedProblem problem(int heads, int next_n, int block_kv = 64, int head_dim = 128) {
    return {.heads = heads, .head_dim = head_dim, .next_n = next_n, .block_kv = block_kv};
}

// The reason paged_variant_support gives, or "" when it accepts.
std::string reason(const std::string& name, const PagedProblem& shape, const Arch& arch = kHopper) {
    const mqajit::Support support = mqajit::paged_variant_support(arch, shape, Variant::parse(name));
    return support ? std::string() : support.reason;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("variants: pwgmma names parse and print back, as their own op") {
    const Variant v = Variant::parse("pwgmma64x128x32_bkv64_r2_w2_lds4");
    CHECK(v.op == MatrixOp::pwgmma);
    CHECK(mqajit::to_string(MatrixOp::pwgmma) == "pwgmma");
    CHECK(v.m == 64);
    CHECK(v.n == 128);
    CHECK(v.k == 32);
    CHECK(v.bkv == 64);
    CHECK(v.rows == 2);
    CHECK(v.warps == 2);
    CHECK(v.stages == 4);
    CHECK(v.name() == "pwgmma64x128x32_bkv64_r2_w2_lds4");
    // Not a wgmma name with a stray letter, and a typo of the op is still refused by name.
    CHECK(Variant::parse("wgmma64x128x32_bkv64_r2_w2_lds4").op == MatrixOp::wgmma);
    try {
        (void)Variant::parse("pwgmm64x128x32_bkv64_r2_w2_lds4");
        FAIL("expected an error");
    } catch (const mqajit::Error& e) {
        CHECK(contains(e.what(), "unknown op 'pwgmm'"));
        CHECK(contains(e.what(), "pwgmma"));
    }
}

TEST_CASE("paged rules: GLM-5 and DeepSeek-V3.2 decode shapes, next_n 1 to 4") {
    // N = next_n x heads: 32..128 for H=32, 64..256 for H=64.
    for (int next_n = 1; next_n <= 4; ++next_n) {
        CAPTURE(next_n);
        const std::string glm5 = "pwgmma64x" + std::to_string(32 * next_n) + "x32_bkv64_r" + std::to_string(next_n);
        CHECK(reason(glm5 + "_w2_lds4", problem(32, next_n)) == "");
        CHECK(reason(glm5 + "_w1_lds2", problem(32, next_n)) == "");
        const std::string deepseek = "pwgmma64x" + std::to_string(64 * next_n) + "x32_bkv64_r" + std::to_string(next_n);
        CHECK(reason(deepseek + "_w2_lds8", problem(64, next_n)) == "");
    }
    CHECK(reason("pwgmma64x64x32_bkv64_r1_w1_lds6", problem(64, 1, 64, 64)) == "");    // head_dim 64
    CHECK(reason("pwgmma64x128x32_bkv128_r2_w2_lds4", problem(64, 2, 128)) == "");     // block_kv 128
}

TEST_CASE("paged rules: each rule refuses with what would work") {
    // The variant must fit the call: r is its next_n, bkv its cache's block_kv, N = r x heads.
    CHECK(contains(reason("pwgmma64x64x32_bkv64_r2_w2_lds4", problem(32, 1)), "r=2 must equal the call's next_n, 1"));
    CHECK(contains(reason("pwgmma64x64x32_bkv64_r1_w2_lds4", problem(32, 1)), "N=64 must equal r x heads = 1 x 32 = 32"));
    CHECK(contains(reason("pwgmma64x64x32_bkv128_r1_w2_lds4", problem(64, 1, 64)),
                   "bkv=128 must equal the cache's block_kv, 64"));
    CHECK(contains(reason("pwgmma64x64x32_bkv32_r1_w2_lds4", problem(64, 1, 32)), "keys per stage) must be 64 or 128"));
    // The arch, the op and the problem size.
    CHECK(contains(reason("pwgmma64x64x32_bkv64_r1_w2_lds4", problem(64, 1), Arch::parse("sm_90")), "need sm_90a"));
    CHECK(contains(reason("pwgmma64x64x32_bkv64_r1_w2_lds4", problem(64, 1), Arch::parse("gfx950")), "need sm_90a"));
    CHECK(contains(reason("wgmma64x64x32_bkv64_r1_w2_lds4", problem(64, 1)), "runs pwgmma or pmfma variants"));
    CHECK(contains(reason("pwgmma64x16x32_bkv64_r1_w2_lds4", problem(16, 1)), "take heads 32, 64"));
    CHECK(contains(reason("pwgmma64x64x32_bkv64_r1_w2_lds4", problem(64, 1, 64, 256)), "head_dim 64, 128"));
    CHECK(contains(reason("pwgmma64x320x32_bkv64_r5_w2_lds4", problem(64, 5)), "r (tokens per request, next_n) must "
                                                                              "be 1 to 4; got 5"));
    CHECK(contains(reason("pwgmma128x64x32_bkv64_r1_w2_lds4", problem(64, 1)), "64x<N>x32"));
    // Warpgroups and stages.
    CHECK(contains(reason("pwgmma64x64x32_bkv64_r1_w5_lds5", problem(64, 1)), "w (math warpgroups) must be 1 to 4"));
    // Four math warpgroups (640 threads) leave 96 registers a thread: enough at N = 64, not at 256.
    CHECK(contains(reason("pwgmma64x256x32_bkv64_r4_w4_lds16", problem(64, 4)), "use fewer warpgroups"));
    CHECK(contains(reason("pwgmma64x64x32_bkv64_r1_w2", problem(64, 1)), "needs _lds<S>"));
    CHECK(contains(reason("pwgmma64x64x32_bkv64_r1_w1_lds1", problem(64, 1)), "must be 2..16"));
    CHECK(contains(reason("pwgmma64x64x32_bkv64_r1_w1_lds17", problem(64, 1)), "must be 2..16"));
    CHECK(contains(reason("pwgmma64x64x32_bkv64_r1_w2_lds5", problem(64, 1)), "lds=5 must be a multiple of w=2"));
    // Accumulators: (bkv/64) x N/2 <= 128.
    CHECK(contains(reason("pwgmma64x256x32_bkv128_r4_w1_lds2", problem(64, 4, 128)),
                   "(bkv/64) x N/2 = 256 registers"));
    // Registers: one math warpgroup has 255 a thread, two 232; N=256 at bkv 64 needs 128 + 64 + 24 = 216.
    CHECK(mqajit::paged_math_thread_registers(Variant::parse("pwgmma64x256x32_bkv64_r4_w1_lds8")) == 255);
    CHECK(mqajit::paged_math_thread_registers(Variant::parse("pwgmma64x256x32_bkv64_r4_w2_lds8")) == 232);
    CHECK(mqajit::paged_registers_needed(Variant::parse("pwgmma64x256x32_bkv64_r4_w2_lds8")) == 216);
    CHECK(reason("pwgmma64x192x32_bkv64_r3_w2_lds6", problem(64, 3)) == "");
    // Shared memory: 16 stages of 128 keys x 128 bytes is more than 227 KiB.
    CHECK(contains(reason("pwgmma64x128x32_bkv128_r2_w2_lds16", problem(64, 2, 128)), "exceeds 232448 B"));
}

TEST_CASE("paged rules: the shared memory is the template's sum") {
    const Variant v = Variant::parse("pwgmma64x128x32_bkv64_r2_w2_lds4");
    // 1024 + S*B*D + 2*N*D + S*B*4 + 8*(2S+4) + 4*((W+1)*128+4)
    const std::int64_t expected = 1024 + 4 * 64 * 128 + 2 * 128 * 128 + 4 * 64 * 4 + 8 * (2 * 4 + 4) + 4 * (3 * 128 + 4);
    CHECK(mqajit::paged_shared_bytes(v, 64, 128) == expected);
    // At bkv=128, D=128, N=128, W=1 it is 34864 + 16912 S bytes: 11 stages fit (220896), 12 do not (237808).
    CHECK(reason("pwgmma64x128x32_bkv128_r2_w1_lds11", problem(64, 2, 128)) == "");
    CHECK(contains(reason("pwgmma64x128x32_bkv128_r2_w1_lds12", problem(64, 2, 128)), "shared memory 237808 B exceeds"));
}

TEST_CASE("paged rules: the prefill registry refuses pwgmma variants instead of failing") {
    const mqajit::Support support = mqajit::VariantRegistry::instance().supports(
        kHopper, 64, 128, Variant::parse("pwgmma64x128x32_bkv64_r2_w2_lds4"));
    CHECK_FALSE(support);
    CHECK(contains(support.reason, "paged_mqa_logits (decode) kernel"));
    for (const Variant& v : mqajit::VariantRegistry::instance().variants(kHopper)) CHECK(v.op != MatrixOp::pwgmma);
}
