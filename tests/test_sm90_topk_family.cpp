// The sm90_mqa_topk family without a GPU: each twgmma variant is its wgmma twin's configuration
// (same rules and launch plan, so its candidates carry the values that twin's mqa_logits() call
// computes, with the epilogue's stage added to the twin's shared memory), only sm_90a wgmma
// variants have a twin, and every registered one compiles under NVRTC without spills or
// serialized wgmma.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>

#include "codegen/families/sm90_mqa_logits/family.hpp"
#include "codegen/families/sm90_mqa_topk/family.hpp"
#include "codegen/family_registry.hpp"
#include "codegen/templates/mqa_logits_params.cuh"
#include "codegen/variant_registry.hpp"
#include "runtime/backend.hpp"
#include "runtime/compiler.hpp"
#include "runtime/kernel_request.hpp"
#include "tests/gpu_support.hpp"

using namespace mqajit;

TEST_CASE("sm90 topk family: each twgmma variant is its wgmma twin with another epilogue") {
    const Arch arch = Arch::parse("sm_90a");
    const MqaTopkFamily& topk = sm90_mqa_topk_family();
    const std::vector<Variant> logits_variants = VariantRegistry::for_op(KernelOp::mqa_logits).variants(arch);
    std::vector<Variant> twins;
    for (const Variant& v : logits_variants) {
        if (v.op != MatrixOp::wgmma) continue;
        CAPTURE(v.name());
        const std::optional<Variant> twin = topk.topk_twin(v);
        REQUIRE(twin.has_value());
        CHECK(twin->name() == "t" + v.name());
        CHECK(topk.logits_twin(*twin) == v);
        CHECK(topk_family_twinning(v) == &topk);
        twins.push_back(*twin);
        for (const auto& [heads, head_dim] : {std::pair{32, 128}, std::pair{64, 128}, std::pair{32, 64}}) {
            const Support logits_support = sm90_mqa_logits_rules().check(arch, heads, head_dim, v);
            const Support topk_support = topk.rules().check(arch, heads, head_dim, *twin);
            CHECK(logits_support.ok == topk_support.ok);
            CHECK(logits_support.reason == topk_support.reason);
            if (logits_support.ok) {
                CHECK(topk.shared_bytes(*twin, heads, head_dim) ==
                      sm90_mqa_logits_family().shared_bytes(v, heads, head_dim) +
                          static_cast<std::size_t>(sm90_topk_stage_bytes(*twin)));
                CHECK(topk.shared_bytes(*twin, heads, head_dim) <= 227 * 1024);
            }
        }
    }
    CHECK(topk.rules().registered(arch) == twins);
    CHECK(VariantRegistry::for_op(KernelOp::mqa_topk).variants(arch) == twins);
    CHECK(topk.rules().registered(Arch::parse("sm_80")).empty());
    // Nothing else has a fused twin, and the rules name the operator a stray variant belongs to.
    CHECK_FALSE(topk.topk_twin(Variant::parse("mma16x8x32_bkv64_r4_w4")).has_value());
    CHECK(topk_family_twinning(Variant::parse("mma16x8x32_bkv64_r4_w4")) == nullptr);
    CHECK(topk_family_twinning(Variant::parse("pwgmma64x64x32_bkv64_r1_w2_lds8")) == nullptr);
    const Support stray = topk.rules().check(arch, 32, 128, Variant::parse("wgmma64x256x32_bkv64_r8_w2_lds4"));
    CHECK_FALSE(stray.ok);
    CHECK(stray.reason.find("twgmma") != std::string::npos);
    CHECK(&topk_family_for(Variant::parse("twgmma64x256x32_bkv64_r8_w2_lds4")) == &topk);
    CHECK_THROWS_AS(topk_family_for(Variant::parse("wgmma64x256x32_bkv64_r8_w2_lds4")), Error);
}

TEST_CASE("sm90 topk family: the launch plan is the twin's with the stage, and the source instantiates the candidate kernel") {
    const Variant v = Variant::parse("twgmma64x256x32_bkv64_r8_w2_lds4");
    const MqaTopkFamily& topk = sm90_mqa_topk_family();
    const ProblemShape shape{.heads = 32, .head_dim = 128, .seq_len = 4096, .seq_len_kv = 32768};
    const DeviceLimits device{.multiprocessors = 132, .max_shared_bytes_per_block = 232448};
    MqaLogitsParams params{};
    const LaunchPlan plan = topk.plan(v, shape, device, params);
    const LaunchPlan twin = sm90_mqa_logits_family().plan(topk.logits_twin(v), shape, device, params);
    CHECK(plan.config.grid_x == twin.config.grid_x);
    CHECK(plan.config.block_x == twin.config.block_x);
    // Eight tiles of (key, value) per math warp (8) and query row (8), and a count each.
    CHECK(sm90_topk_stage_bytes(v) == 8 * 8 * (8 * 16 * 8 + 4));
    CHECK(plan.config.dynamic_shared_bytes ==
          twin.config.dynamic_shared_bytes + static_cast<std::size_t>(sm90_topk_stage_bytes(v)));
    CHECK(plan.num_kv_splits == twin.num_kv_splits);
    CHECK(plan.num_q_blocks == twin.num_q_blocks);
    CHECK(plan.num_tensor_maps == twin.num_tensor_maps);
    const GeneratedKernel kernel = topk.generate(v, 32, 128, Arch::parse("sm_90a"));
    CHECK(kernel.source.find("#include \"sm90_mqa_topk.cuh\"") != std::string::npos);
    CHECK(kernel.source.find("MQA_SM90_TOPK_KERNEL(" + kernel.kernel_name + ", 32, 128, 64, 8, 2, 4)") !=
          std::string::npos);
    CHECK_THROWS_AS(topk.generate(v, 32, 128, Arch::parse("sm_80")), Error);
}

TEST_CASE("sm90 topk family: twgmma variants at the callers' shapes compile without spills or serialization") {
    MQAJIT_REQUIRE_BACKEND(Vendor::nvidia);
    const Arch arch = Arch::parse("sm_90a");
    const Compiler& compiler = backend->compiler();
    int compiled = 0;
    for (const int heads : {32, 64}) {
        for (const Variant& v : VariantRegistry::for_op(KernelOp::mqa_topk).variants(arch, heads, 128)) {
            CAPTURE(v.name());
            CAPTURE(heads);
            const CompileResult result = compiler.compile(compile_request_for(v, heads, 128, arch));
            MESSAGE(fmt::format("{} h{}: {} registers", v.name(), heads, result.usage.registers));
            CHECK_FALSE(result.binary.empty());
            CHECK(result.usage.spill_store_bytes == 0);
            CHECK(result.usage.spill_load_bytes == 0);
            CHECK_FALSE(result.usage.wgmma_serialized);
            ++compiled;
        }
    }
    CHECK(compiled >= 16);
}
