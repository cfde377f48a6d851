// The gfx9 decode family (pmfma) without a GPU: its registry, generated unit, rules and their
// reasons, resource math and launch plan. Nothing here has run on AMD hardware.

#include <doctest/doctest.h>

#include <set>
#include <string>

#include "codegen/families/gfx9_paged_mqa_logits/family.hpp"
#include "codegen/family_registry.hpp"
#include "codegen/paged_variant_support.hpp"
#include "codegen/templates/paged_mqa_logits_params.cuh"
#include "codegen/variant_registry.hpp"
#include "mqajit/error.hpp"
#include "tests/paged_fakes.hpp"
#include "tests/error_kind.hpp"
#include "tuning_db/check.hpp"

using namespace mqajit;

namespace {

const Arch kGfx950 = Arch::parse("gfx950");
const Arch kGfx942 = Arch::parse("gfx942");

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The reason the family's rules give at (heads, head_dim), or "" when they accept.
std::string reason(const char* name, const Arch& arch = kGfx950, int heads = 64, int head_dim = 128) {
    const Support s = gfx9_paged_mqa_logits_rules().check(arch, heads, head_dim, Variant::parse(name));
    return s ? std::string() : s.reason;
}

PagedProblemShape decode_shape(int batch, int next_n, int max_context_len) {
    return PagedProblemShape{.batch = batch, .next_n = next_n, .heads = 64, .head_dim = 128, .block_kv = 64,
                             .max_context_len = max_context_len, .num_cache_blocks = 4096};
}

}  // namespace

TEST_CASE("gfx9 paged: pmfma names parse as their own op and find the gfx9 decode family and registry") {
    const Variant v = Variant::parse("pmfma32x32x64_bkv64_r2_w2_lds3");
    CHECK(v.op == MatrixOp::pmfma);
    CHECK(to_string(MatrixOp::pmfma) == "pmfma");
    CHECK(v.name() == "pmfma32x32x64_bkv64_r2_w2_lds3");
    CHECK(Variant::parse("mfma32x32x64_bkv64_r2_w2_lds3").op == MatrixOp::mfma);
    CHECK(&kernel_family_for(v) == &gfx9_paged_mqa_logits_family());
    CHECK(&paged_family_for(v) == &gfx9_paged_mqa_logits_family());
    CHECK(&VariantRegistry::of(v) == &VariantRegistry::for_op(KernelOp::paged_mqa_logits));
    CHECK(gfx9_paged_mqa_logits_family().kernel_op() == KernelOp::paged_mqa_logits);
    CHECK_THROWS_AS(family_for(v), Error);  // not an mqa_logits kernel
    const Support prefill = VariantRegistry::instance().supports(kGfx950, 64, 128, v);
    CHECK_FALSE(prefill.ok);
    CHECK(contains(prefill.reason, "paged_mqa_logits (decode) kernel"));
}

TEST_CASE("gfx9 paged: the decode registry lists pmfma variants on gfx942 and gfx950, a few per next_n") {
    const VariantRegistry& registry = VariantRegistry::for_op(KernelOp::paged_mqa_logits);
    CHECK(registry.archs() == std::vector<std::string>{"sm_90a", "gfx942", "gfx950"});
    for (const Arch& arch : {kGfx942, kGfx950}) {
        CAPTURE(arch.name);
        const std::vector<Variant> all = registry.variants(arch);
        CHECK(all.size() == 20);  // next_n 1..4 x (three 32x32 and two 16x16 shapes)
        std::set<int> next_ns;
        for (const Variant& v : all) {
            CHECK(v.op == MatrixOp::pmfma);
            next_ns.insert(v.rows);
        }
        CHECK(next_ns == std::set<int>{1, 2, 3, 4});
        // At D = 64 the 16x16x128 MFMA does not tile d on gfx950; at H = 64, D = 128 gfx942's 64 KiB
        // of LDS refuses four of the 128-token-block variants (next_n 4, and 2 to 4 with three buffers).
        for (const Variant& v : registry.variants(arch, 64, 128)) CHECK(registry.supports(arch, 64, 128, v).ok);
    }
    CHECK(registry.variants(kGfx950, 64, 128).size() == 20);
    CHECK(registry.variants(kGfx950, 32, 64).size() == 12);
    CHECK(registry.variants(kGfx942, 64, 128).size() == 16);
    CHECK(registry.variants(kGfx942, 32, 64).size() == 20);
    CHECK(registry.variants(Arch::parse("gfx90a")).empty());
    CHECK_FALSE(registry.supports(kGfx950, 64, 128, Variant::parse("pmfma32x32x64_bkv64_r2_w1_lds2")).ok);  // not listed
}

TEST_CASE("gfx9 paged: the generated source is one include and one macro line over the decode template") {
    const Variant v = Variant::parse("pmfma16x16x128_bkv64_r3_w4_lds2");
    const GeneratedKernel kernel = gfx9_paged_mqa_logits_family().generate(v, 32, 128, kGfx950);
    CHECK(kernel.kernel_name == "mqa_logits_pmfma16x16x128_bkv64_r3_w4_lds2_h32_d128");
    CHECK(contains(kernel.source, "#include \"gfx9_paged_mqa_logits.cuh\""));
    CHECK(contains(kernel.source, "MQA_GFX9_PAGED_KERNEL(mqa_logits_pmfma16x16x128_bkv64_r3_w4_lds2_h32_d128, 32, 128, "
                                  "16, 128, 64, 3, 4, 2)"));
    std::set<std::string> headers;
    for (const EmbeddedFile& header : kernel.headers) headers.emplace(header.name);
    CHECK(headers == std::set<std::string>{"gfx9_paged_mqa_logits.cuh", "gfx9_mfma.cuh", "hip_minimal.cuh",
                                           "mqa_device_common.cuh", "mqa_common.cuh", "paged_mqa_logits_params.cuh",
                                           "mqa_logits_params.cuh"});
    const GeneratedKernel gfx942 = gfx9_paged_mqa_logits_family().generate(
        Variant::parse("pmfma32x32x16_bkv64_r1_w2_lds2"), 64, 64, Arch::parse("gfx942:sramecc+:xnack-"));
    CHECK(contains(gfx942.source, "_h64_d64, 64, 64, 32, 16, 64, 1, 2, 2)"));
    CHECK(testing::error_kind_of([] {
              gfx9_paged_mqa_logits_family().generate(Variant::parse("pmfma32x32x16_bkv64_r1_w2_lds2"), 64, 128, kGfx950);
          }) == ErrorKind::unsupported);
    CHECK(testing::error_kind_of([] {
              gfx9_paged_mqa_logits_family().generate(Variant::parse("mfma32x32x64_bkv64_r1_w2_lds2"), 64, 128, kGfx950);
          }) == ErrorKind::internal);
}

TEST_CASE("gfx9 paged: each rule refuses with what would work") {
    CHECK(reason("pmfma32x32x64_bkv64_r4_w2_lds2") == "");
    CHECK(reason("pmfma32x32x16_bkv128_r3_w4_lds2", kGfx942, 32, 64) == "");
    CHECK(contains(reason("pmfma32x32x64_bkv64_r1_w2_lds2", Arch::parse("sm_90a")), "need gfx942 or gfx950"));
    CHECK(contains(reason("pmfma32x32x64_bkv64_r1_w2_lds2", Arch::parse("gfx90a")), "need gfx942 or gfx950"));
    CHECK(contains(reason("pmfma32x32x16_bkv64_r1_w2_lds2"), "not an fp8 MFMA of gfx950; it runs pmfma32x32x64 or "
                                                             "pmfma16x16x128"));
    CHECK(contains(reason("pmfma32x32x64_bkv64_r1_w2_lds2", kGfx942), "it runs pmfma32x32x16 or pmfma16x16x32"));
    CHECK(contains(reason("pmfma32x32x64_bkv64_r1_w2_lds2", kGfx950, 48), "take heads 32, 64"));
    CHECK(contains(reason("pmfma32x32x64_bkv64_r1_w2_lds2", kGfx950, 64, 256), "head_dim 64, 128"));
    CHECK(contains(reason("pmfma32x32x64_bkv64_r5_w2_lds2"), "next_n) must be 1 to 4; got 5"));
    CHECK(contains(reason("pmfma32x32x64_bkv32_r1_w2_lds2"), "bkv (the cache's tokens per block) must be 64, 128"));
    CHECK(contains(reason("pmfma32x32x64_bkv64_r1_w3_lds2"), "w (waves per workgroup) must be 1, 2, 4"));
    CHECK(contains(reason("pmfma32x32x64_bkv64_r1_w2"), "needs _lds<S>"));
    CHECK(contains(reason("pmfma32x32x64_bkv64_r1_w2_lds5"), "must be 2, 3, 4; got 5"));
    CHECK(contains(reason("pmfma16x16x128_bkv64_r1_w4_lds2", kGfx950, 64, 64), "head_dim a multiple of 128"));
    // One token's two column tiles of a 64-token block cannot feed four waves.
    CHECK(contains(reason("pmfma32x32x64_bkv64_r1_w4_lds2"), "2 (token, column tile) pairs must split evenly over w=4"));
    CHECK(reason("pmfma32x32x64_bkv64_r2_w4_lds2") == "");
    // LDS: 4 x 64 x 128 B of Q + 3 x (128 x 128 + 512) B of blocks is over gfx942's 64 KiB, not gfx950's 160.
    CHECK(contains(reason("pmfma32x32x16_bkv128_r4_w4_lds3", kGfx942), "LDS 83456 B exceeds 65536 B (64 KiB on gfx942)"));
    CHECK(reason("pmfma32x32x64_bkv128_r4_w4_lds3") == "");
}

TEST_CASE("gfx9 paged: LDS is the request's Q plus the block buffers, the sum the rules and the launch use") {
    const Variant v = Variant::parse("pmfma32x32x64_bkv64_r3_w2_lds3");
    CHECK(pmfma_lds_bytes(v, 64, 128) == 3 * 64 * 128 + 3 * (64 * 128 + 64 * 4));
    CHECK(gfx9_paged_mqa_logits_family().shared_bytes(v, 64, 128) == static_cast<std::size_t>(pmfma_lds_bytes(v, 64, 128)));
    // VGPRs: Q operands (H/M x D/K x M*K/256), accumulators and weights (2 x H/M x M*M/64), the staged
    // chunks (4 per 16-byte chunk, plus 4 for the scales) and 36; clang reported 158 for this one.
    CHECK(pmfma_vgpr_estimate(Variant::parse("pmfma32x32x64_bkv64_r4_w2_lds2"), 64, 128) == 32 + 64 + 20 + 36);
    CHECK(pmfma_vgpr_estimate(Variant::parse("pmfma16x16x128_bkv64_r3_w4_lds3"), 32, 128) == 16 + 16 + 12 + 36);
    // The largest the fields allow, one wave staging a 128-token block of 128-byte keys, is within 256.
    CHECK(pmfma_vgpr_estimate(Variant::parse("pmfma32x32x16_bkv128_r1_w1_lds2"), 64, 128) == 32 + 64 + 68 + 36);
}

TEST_CASE("gfx9 paged: decode variants fit the call's next_n and block size, through the shared decode check") {
    const auto support = [](const char* name, int next_n, int block_kv, const Arch& arch = kGfx950) {
        return paged_variant_support(arch, {.heads = 64, .head_dim = 128, .next_n = next_n, .block_kv = block_kv},
                                     Variant::parse(name));
    };
    CHECK(support("pmfma32x32x64_bkv64_r2_w2_lds2", 2, 64).ok);
    CHECK(contains(support("pmfma32x32x64_bkv64_r2_w2_lds2", 1, 64).reason, "r=2 must equal the call's next_n, 1"));
    CHECK(contains(support("pmfma32x32x64_bkv64_r2_w2_lds2", 2, 128).reason, "must equal the cache's block_kv, 128"));
    CHECK(contains(support("pmfma32x32x64_bkv64_r2_w2_lds2", 2, 64, Arch::parse("sm_90a")).reason, "gfx942 or gfx950"));
    CHECK(contains(support("pwgmma64x128x32_bkv64_r2_w2_lds8", 2, 64).reason, "need sm_90a"));
    CHECK(contains(support("mfma32x32x64_bkv64_r2_w2_lds2", 2, 64).reason, "runs pwgmma or pmfma variants"));

    // The decode table's check takes a gfx950 row of a pmfma variant, and refuses one for the wrong arch.
    PagedTunedRow row;
    row.key = PagedShapeKey{.arch = "gfx950", .cu_num = 256, .next_n = 2, .heads = 64, .head_dim = 128,
                            .block_kv = 64, .clean_logits = 0, .batch = 1};
    row.backend = "jit";
    row.variant = "pmfma32x32x64_bkv64_r2_w2_lds3";
    CHECK_FALSE(tuning::unrunnable_problem(row));
    row.key.arch = "gfx942";
    CHECK(contains(tuning::unrunnable_problem(row).value_or(""), "not an fp8 MFMA of gfx942"));
}

TEST_CASE("gfx9 paged: the plan is one workgroup per (request, split), splits from the batch and the CUs") {
    const PagedMqaLogitsFamily& family = gfx9_paged_mqa_logits_family();
    const Variant v = Variant::parse("pmfma32x32x64_bkv64_r2_w2_lds2");
    const DeviceLimits mi355x{.multiprocessors = 256, .max_shared_bytes_per_block = 160 * 1024};

    // One request of up to 32768 keys: 512 blocks, one per split, 512 workgroups (two per CU).
    PagedProblemShape shape = decode_shape(1, 2, 32768);
    LaunchPlan plan = family.plan(v, shape, mi355x, testing::fake_paged_params(shape));
    CHECK(plan.config.grid_x == 1);
    CHECK(plan.config.grid_y == 512);
    CHECK(plan.config.block_x == 128);
    CHECK(plan.config.dynamic_shared_bytes == family.shared_bytes(v, 64, 128));
    CHECK(plan.tensor_maps().empty());
    // 128 requests of 4096 keys: 4 splits of 16 blocks; 2048 requests need no split.
    shape = decode_shape(128, 2, 4096);
    CHECK(family.plan(v, shape, mi355x, testing::fake_paged_params(shape)).config.grid_y == 4);
    shape = decode_shape(2048, 2, 4096);
    plan = family.plan(v, shape, mi355x, testing::fake_paged_params(shape));
    CHECK(plan.config.grid_x == 2048);
    CHECK(plan.config.grid_y == 1);
    // Never more splits than a max_context_len request has blocks, and at least one for an empty call.
    shape = decode_shape(1, 2, 100);
    CHECK(family.plan(v, shape, mi355x, testing::fake_paged_params(shape)).config.grid_y == 2);
    shape = decode_shape(3, 2, 0);
    plan = family.plan(v, shape, mi355x, testing::fake_paged_params(shape));
    CHECK(plan.config.grid_x == 3);
    CHECK(plan.config.grid_y == 1);
    // A cap on the CUs lowers the splits.
    shape = decode_shape(1, 2, 32768);
    shape.num_sms = 64;
    CHECK(family.plan(v, shape, mi355x, testing::fake_paged_params(shape)).config.grid_y == 128);
    CHECK(pmfma_splits(1, 32768, 64, 64) == 128);
}

TEST_CASE("gfx9 paged: the plan refuses another next_n or block size, too much LDS and unaligned operands") {
    const PagedMqaLogitsFamily& family = gfx9_paged_mqa_logits_family();
    const Variant v = Variant::parse("pmfma32x32x64_bkv128_r4_w4_lds3");
    const DeviceLimits mi355x{.multiprocessors = 256, .max_shared_bytes_per_block = 160 * 1024};
    PagedProblemShape shape = decode_shape(8, 4, 4096);
    CHECK(testing::error_kind_of([&] { family.plan(v, shape, mi355x, testing::fake_paged_params(shape)); }) == ErrorKind::unsupported);
    shape.block_kv = 128;
    CHECK_NOTHROW(family.plan(v, shape, mi355x, testing::fake_paged_params(shape)));
    shape.next_n = 3;
    CHECK(contains(family.fits(v, shape).reason, "the call's next_n, 3"));
    shape.next_n = 4;
    const DeviceLimits mi300x{.multiprocessors = 304, .max_shared_bytes_per_block = 64 * 1024};
    try {
        family.plan(v, shape, mi300x, testing::fake_paged_params(shape));
        FAIL("a plan beyond the device's LDS was made");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::unsupported);
        CHECK(contains(e.what(), "lower lds or bkv"));
    }
    PagedMqaLogitsParams params = testing::fake_paged_params(shape);
    params.cache_block_bytes = 128 * 132 + 4;
    CHECK(testing::error_kind_of([&] { family.plan(v, shape, mi355x, params); }) == ErrorKind::invalid_argument);
    params = testing::fake_paged_params(shape);
    params.q = params.q + 8;
    CHECK(testing::error_kind_of([&] { family.plan(v, shape, mi355x, params); }) == ErrorKind::invalid_argument);
}
