// The mfma family's generator and launch plan, without a GPU: thin source, LDS sizes that match the
// variant rules, refusals that name the fix, and the grid it plans.

#include <doctest/doctest.h>

#include <string>

#include "codegen/families/gfx9_mqa_logits/family.hpp"
#include "codegen/family_registry.hpp"
#include "codegen/templates/mqa_logits_params.cuh"
#include "mqajit/error.hpp"
#include "tests/error_kind.hpp"
#include "codegen/variant_registry.hpp"

using namespace mqajit;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("gfx9 codegen: mfma variants map to the gfx9 family, whose source is one include and one macro") {
    const Variant v = Variant::parse("mfma32x32x64_bkv128_r2_w4_lds3");
    const KernelFamily& family = family_for(v);
    CHECK(&family == &gfx9_mqa_logits_family());
    CHECK(family.name() == "gfx9_mqa_logits");
    CHECK(family.op() == MatrixOp::mfma);

    const GeneratedKernel kernel = family.generate(v, 64, 128, Arch::parse("gfx950"));
    CHECK(kernel.kernel_name == "mqa_logits_mfma32x32x64_bkv128_r2_w4_lds3_h64_d128");
    CHECK(contains(kernel.source, "#include \"gfx9_mqa_logits.cuh\""));
    CHECK(contains(kernel.source,
                   "MQA_GFX9_MQA_LOGITS_KERNEL(mqa_logits_mfma32x32x64_bkv128_r2_w4_lds3_h64_d128, 64, 128, 32, 64, "
                   "128, 2, 4, 3)"));
    bool has_template = false, has_minimal_header = false;
    for (const EmbeddedFile& header : kernel.headers) {
        has_template |= header.name == "gfx9_mqa_logits.cuh";
        has_minimal_header |= header.name == "hip_minimal.cuh";
    }
    CHECK(has_template);
    CHECK(has_minimal_header);

    const GeneratedKernel gfx942 =
        family.generate(Variant::parse("mfma16x16x32_bkv64_r1_w2_lds2"), 32, 64, Arch::parse("gfx942:sramecc+:xnack-"));
    CHECK(contains(gfx942.source, "_h32_d64, 32, 64, 16, 32, 64, 1, 2, 2)"));
}

TEST_CASE("gfx9 codegen: LDS is the Q rows plus the KV buffers, the sum the variant rules check") {
    const KernelFamily& family = gfx9_mqa_logits_family();
    const auto& registry = VariantRegistry::instance();
    int num_checked = 0;
    for (const char* arch_name : {"gfx942", "gfx950"}) {
        const Arch arch = Arch::parse(arch_name);
        for (int heads : {32, 64}) {
            for (int head_dim : {64, 128}) {
                for (const Variant& v : registry.variants(arch, heads, head_dim)) {
                    if (v.op != MatrixOp::mfma) continue;
                    CAPTURE(v.name());
                    const std::size_t expected = std::size_t(v.rows) * v.warps * heads * head_dim +
                                                 std::size_t(v.stages) * v.bkv * head_dim;
                    CHECK(family.shared_bytes(v, heads, head_dim) == expected);
                    CHECK(family.shared_bytes(v, heads, head_dim) <= (arch.number == 950 ? 163840u : 65536u));
                    ++num_checked;
                }
            }
        }
    }
    CHECK(num_checked > 100);
}

TEST_CASE("gfx9 codegen: the generator refuses other archs and the other arch's instructions") {
    const KernelFamily& family = gfx9_mqa_logits_family();
    CHECK(mqajit::testing::error_kind_of([&] {
              family.generate(Variant::parse("mfma32x32x64_bkv64_r1_w2_lds2"), 32, 128, Arch::parse("gfx942"));
          }) == ErrorKind::unsupported);
    CHECK(mqajit::testing::error_kind_of([&] {
              family.generate(Variant::parse("mfma32x32x16_bkv64_r1_w2_lds2"), 32, 128, Arch::parse("gfx950"));
          }) == ErrorKind::unsupported);
    CHECK(mqajit::testing::error_kind_of([&] {
              family.generate(Variant::parse("mfma32x32x64_bkv64_r1_w2_lds2"), 32, 128, Arch::parse("sm_90a"));
          }) == ErrorKind::unsupported);
    CHECK(mqajit::testing::error_kind_of([&] {
              family.generate(Variant::parse("mfma32x32x64_bkv64_r1_w2_lds1"), 32, 128, Arch::parse("gfx950"));
          }) == ErrorKind::unsupported);
    CHECK(mqajit::testing::error_kind_of([&] {
              family.generate(Variant::parse("mma16x8x32_bkv64_r4_w4_lds2"), 32, 128, Arch::parse("gfx950"));
          }) == ErrorKind::internal);
}

TEST_CASE("gfx9 codegen: the plan covers every query row with R x W rows per block and W waves of 64") {
    const MqaLogitsFamily& family = gfx9_mqa_logits_family();
    const Variant v = Variant::parse("mfma32x32x64_bkv64_r2_w2_lds3");
    const DeviceLimits device{.multiprocessors = 256, .max_shared_bytes_per_block = 160 * 1024};  // an MI355X
    alignas(16) static unsigned char q[16], kv[16];
    MqaLogitsParams params{};
    params.q = q;
    params.kv = kv;
    params.q_stride_s = 32 * 128;
    params.kv_stride_n = 128;
    const LaunchPlan plan = family.plan(v, ProblemShape{.heads = 32, .head_dim = 128, .seq_len = 1001, .seq_len_kv = 8192},
                                        device, params);
    CHECK(plan.config.grid_x == 251);  // ceil(1001 / (2 x 2))
    CHECK(plan.config.block_x == 128);
    CHECK(plan.config.dynamic_shared_bytes == family.shared_bytes(v, 32, 128));
    CHECK(plan.num_q_blocks == 251);
    CHECK(plan.config.grid_y == static_cast<unsigned>(plan.num_kv_splits));
    CHECK(plan.num_kv_splits >= 1);
    CHECK(plan.num_kv_splits <= 8192 / 64);
    CHECK(plan.tensor_maps().empty());

    const DeviceLimits mi300x{.multiprocessors = 304, .max_shared_bytes_per_block = 64 * 1024};
    CHECK(mqajit::testing::error_kind_of([&] {
              family.plan(Variant::parse("mfma32x32x64_bkv128_r4_w4_lds3"), ProblemShape{32, 128, 16, 16}, mi300x, params);
          }) == ErrorKind::unsupported);  // 114688 B of LDS

    params.kv_stride_n = 100;  // rows no longer 16-byte aligned
    CHECK(mqajit::testing::error_kind_of([&] {
              family.plan(v, ProblemShape{.heads = 32, .head_dim = 128, .seq_len = 1, .seq_len_kv = 1}, device, params);
          }) == ErrorKind::invalid_argument);
}
