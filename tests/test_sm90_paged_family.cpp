// The sm90_paged_mqa_logits family without a GPU: its registry, rules, launch plan and that every
// registered variant compiles under NVRTC without spills or serialized wgmma.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstddef>
#include <string>

#include "codegen/families/sm90_paged_mqa_logits/family.hpp"
#include "codegen/family_registry.hpp"
#include "codegen/templates/paged_mqa_logits_params.cuh"
#include "codegen/variant_registry.hpp"
#include "mqajit/error.hpp"
#include "tests/paged_fakes.hpp"
#include "runtime/backend.hpp"
#include "runtime/compiler.hpp"
#include "runtime/kernel_request.hpp"
#include "tests/gpu_support.hpp"

using namespace mqajit;

namespace {

const Arch kSm90 = Arch::parse("sm_90a");

PagedProblemShape decode_shape(int batch, int next_n, int heads, int max_context_len) {
    return PagedProblemShape{.batch = batch, .next_n = next_n, .heads = heads, .head_dim = 128, .block_kv = 64,
                             .max_context_len = max_context_len, .num_cache_blocks = 4096, .context_lens_2d = false};
}

void check_paged_variants_compile(int heads, int head_dim) {
    MQAJIT_REQUIRE_BACKEND(Vendor::nvidia);
    const Compiler& compiler = backend->compiler();
    int compiled = 0;
    for (const Variant& v : VariantRegistry::for_op(KernelOp::paged_mqa_logits).variants(kSm90, heads, head_dim)) {
        CAPTURE(v.name());
        const CompileRequest request = compile_request_for(v, heads, head_dim, kSm90);
        CHECK(request.source.find("#include <") == std::string::npos);
        const CompileResult result = compiler.compile(request);
        MESSAGE(fmt::format("{} h{} d{}: {} registers", v.name(), heads, head_dim, result.usage.registers));
        CHECK_FALSE(result.binary.empty());
        CHECK(result.usage.registers > 0);
        CHECK(result.usage.spill_store_bytes == 0);
        CHECK(result.usage.spill_load_bytes == 0);
        CHECK_FALSE(result.usage.wgmma_serialized);
        ++compiled;
    }
    // next_n 1..4 x {w2, w1} x {8, 16} stages, w3 (12 stages) where N <= 128, w4 (16) where N <= 96.
    CHECK(compiled == (heads == 32 ? 23 : 19));
}

}  // namespace

TEST_CASE("paged family: the registry of the decode operator lists pwgmma variants for sm_90a") {
    const VariantRegistry& registry = VariantRegistry::for_op(KernelOp::paged_mqa_logits);
    CHECK(registry.archs() == std::vector<std::string>{"sm_90a", "gfx942", "gfx950"});  // pmfma on AMD
    CHECK(registry.variants(Arch::parse("sm_80")).empty());
    const std::vector<Variant> h64 = registry.variants(kSm90, 64, 128);
    REQUIRE(h64.size() == 19);  // w1, w2 at 8 and 16 stages per next_n; w3 at N <= 128, w4 at N = 64
    for (const Variant& v : h64) {
        CHECK(v.op == MatrixOp::pwgmma);
        CHECK(v.n == v.rows * 64);
    }
    // The prefill registry knows nothing of them, and each variant finds its own operator's registry.
    const Variant baseline = paged_baseline_variant(64, 2);
    CHECK(baseline.name() == "pwgmma64x128x32_bkv64_r2_w2_lds8");
    CHECK(&VariantRegistry::of(baseline) == &registry);
    CHECK(&VariantRegistry::of(Variant::parse("wgmma64x128x32_bkv64_r4_w2_lds4")) == &VariantRegistry::instance());
    CHECK(kernel_family_for(baseline).name() == "sm90_paged_mqa_logits");
    CHECK(paged_family_for(baseline).kernel_op() == KernelOp::paged_mqa_logits);
    CHECK_THROWS_AS(paged_family_for(Variant::parse("wgmma64x128x32_bkv64_r4_w2_lds4")), Error);
}

TEST_CASE("paged family: the rules say why a variant cannot run") {
    const FamilyRules& rules = sm90_paged_mqa_logits_rules();
    const auto reason = [&](const char* name, int heads = 64, const char* arch = "sm_90a") {
        const Support s = rules.check(Arch::parse(arch), heads, 128, Variant::parse(name));
        CHECK_FALSE(s.ok);
        return s.reason;
    };
    CHECK(rules.check(kSm90, 64, 128, Variant::parse("pwgmma64x128x32_bkv64_r2_w2_lds8")).ok);
    CHECK(reason("pwgmma64x128x32_bkv64_r2_w2_lds8", 64, "sm_90").find("sm_90a") != std::string::npos);
    CHECK(reason("pwgmma64x96x32_bkv64_r2_w2_lds8").find("r x heads") != std::string::npos);
    CHECK(reason("pwgmma64x320x32_bkv64_r5_w2_lds8").find("1 to 4") != std::string::npos);
    CHECK(reason("pwgmma64x128x32_bkv32_r2_w2_lds8").find("64 or 128") != std::string::npos);
    CHECK(reason("pwgmma64x64x32_bkv64_r1_w5_lds10").find("1 to 4") != std::string::npos);
    CHECK(rules.check(kSm90, 64, 128, Variant::parse("pwgmma64x64x32_bkv64_r1_w4_lds16")).ok);
    // Four math warpgroups leave 96 registers a thread: not enough at N = 128.
    CHECK(reason("pwgmma64x128x32_bkv64_r2_w4_lds16").find("use fewer warpgroups") != std::string::npos);
    CHECK(reason("pwgmma64x128x32_bkv64_r2_w2_lds7").find("multiple of w") != std::string::npos);
    // bkv128 at next_n 4 and H 64: 256 accumulators a thread.
    CHECK(reason("pwgmma64x256x32_bkv128_r4_w1_lds8").find("registers per thread") != std::string::npos);
    CHECK(reason("pwgmma64x128x32_bkv128_r2_w2_lds16").find("shared memory") != std::string::npos);
    CHECK(reason("pwgmma64x128x32_bkv64_r2_w2_lds8", 48).find("heads") != std::string::npos);
}

TEST_CASE("paged family: the launch plan fits the call and names three tensor maps in the argument") {
    const PagedMqaLogitsFamily& family = sm90_paged_mqa_logits_family();
    const Variant v = Variant::parse("pwgmma64x128x32_bkv64_r2_w2_lds8");
    const DeviceLimits h200{.multiprocessors = 132, .max_shared_bytes_per_block = 232448};

    PagedProblemShape shape = decode_shape(64, 2, 64, 8192);
    const LaunchPlan plan = family.plan(v, shape, h200, testing::fake_paged_params(shape));
    CHECK(plan.config.grid_x == 132);
    CHECK(plan.config.block_x == 384);
    CHECK(plan.config.dynamic_shared_bytes == static_cast<std::size_t>(paged_shared_bytes(v, 64, 128)));
    REQUIRE(plan.tensor_maps().size() == 3);
    CHECK(plan.tensor_maps()[0].argument_offset == offsetof(PagedMqaLogitsParams, tma_q));
    CHECK(plan.tensor_maps()[1].argument_offset == offsetof(PagedMqaLogitsParams, tma_keys));
    CHECK(plan.tensor_maps()[2].argument_offset == offsetof(PagedMqaLogitsParams, tma_scales));
    const TensorMapRequest& q = plan.tensor_maps()[0].request;
    CHECK(q.rank == 3);
    CHECK(q.dims[1] == 128);  // next_n x heads rows of one request in one box
    CHECK(q.box[1] == 128);
    CHECK(q.dims[2] == 64);
    const TensorMapRequest& keys = plan.tensor_maps()[1].request;
    CHECK(keys.dims[1] == 64);
    CHECK(keys.dims[2] == 4096);
    CHECK(keys.strides_bytes[1] == 64 * 132);
    const TensorMapRequest& scales = plan.tensor_maps()[2].request;
    CHECK(scales.element_bytes == 4);
    CHECK(static_cast<const unsigned char*>(scales.base) - static_cast<const unsigned char*>(keys.base) == 64 * 128);

    // A cap on the SMs (an engine keeping some for other work) caps the grid.
    shape.num_sms = 100;
    CHECK(family.plan(v, shape, h200, testing::fake_paged_params(shape)).config.grid_x == 100);
    shape.num_sms = 1000;
    CHECK(family.plan(v, shape, h200, testing::fake_paged_params(shape)).config.grid_x == 132);
    // Two requests of 100 tokens need four blocks: no CTA is started that could never get work.
    shape = decode_shape(2, 2, 64, 100);
    CHECK(family.plan(v, shape, h200, testing::fake_paged_params(shape)).config.grid_x == 4);
    // A call that sees nothing still launches one block per request (clean_logits writes its -inf).
    shape = decode_shape(3, 2, 64, 0);
    CHECK(family.plan(v, shape, h200, testing::fake_paged_params(shape)).config.grid_x == 3);
}

TEST_CASE("paged family: a variant of another next_n, block size or too much shared memory is refused") {
    const PagedMqaLogitsFamily& family = sm90_paged_mqa_logits_family();
    const Variant v = Variant::parse("pwgmma64x128x32_bkv64_r2_w2_lds16");
    const DeviceLimits h200{.multiprocessors = 132, .max_shared_bytes_per_block = 232448};
    PagedProblemShape shape = decode_shape(8, 1, 64, 4096);
    CHECK(family.fits(v, shape).reason.find("the call's next_n, 1") != std::string::npos);
    CHECK_THROWS_AS(family.plan(v, shape, h200, testing::fake_paged_params(shape)), Error);
    shape = decode_shape(8, 2, 64, 4096);
    shape.block_kv = 128;
    CHECK(family.fits(v, shape).reason.find("block_kv, 128") != std::string::npos);
    shape.block_kv = 64;
    CHECK(family.fits(v, shape).ok);
    const DeviceLimits small{.multiprocessors = 78, .max_shared_bytes_per_block = 101376};
    try {
        family.plan(v, shape, small, testing::fake_paged_params(shape));
        FAIL("a plan beyond the device's shared memory was made");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("lower lds") != std::string::npos);
    }
}

TEST_CASE("paged codegen: pwgmma variants at heads=32 head_dim=128 compile without spills or serialization") {
    check_paged_variants_compile(32, 128);
}
TEST_CASE("paged codegen: pwgmma variants at heads=64 head_dim=128 compile without spills or serialization") {
    check_paged_variants_compile(64, 128);
}
