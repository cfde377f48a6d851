// The mfma family (codegen/templates/gfx9_mqa_logits.cuh): fp8 MFMA on AMD gfx942 and gfx950,
// compiled as HIP by clang ahead of time (runtime/compiler_clang_hip.cpp).

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "codegen/family_support.hpp"
#include "codegen/families.hpp"
#include "codegen/grid_plan.hpp"
#include "codegen/gfx9_family.hpp"
#include "codegen/sm80_family.hpp"
#include "codegen/templates/gfx9_mqa_logits.cuh"
#include "core/check.hpp"

namespace mqajit {
namespace {

struct MfmaInstruction {
    int arch_number;
    int m;
    int k;
};

// NOTES: the template specialises exactly these; anything else would fail inside clang with a
// message about an incomplete type, so it is refused here with one that names the choices.
constexpr MfmaInstruction kInstructions[] = {
    {950, 32, 64}, {950, 16, 128},  // v_mfma_scale_f32_{32x32x64,16x16x128}_f8f6f4, e4m3fn
    {942, 32, 16}, {942, 16, 32},   // v_mfma_f32_{32x32x16,16x16x32}_fp8_fp8, e4m3fnuz
};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

void check_generatable(const Variant& v, int heads, int head_dim, const Arch& arch) {
    MQAJIT_CHECK_KIND(internal, v.op == MatrixOp::mfma, "the mfma family was asked to generate {}", v.name());
    MQAJIT_CHECK_KIND(unsupported, arch.vendor == Vendor::amd && (arch.number == 942 || arch.number == 950),
                      "variant {} uses fp8 MFMA, which needs gfx942 or gfx950; the target is {}", v.name(), arch.name);
    const bool known = std::ranges::any_of(kInstructions, [&](const MfmaInstruction& i) {
        return i.arch_number == arch.number && i.m == v.m && v.n == v.m && i.k == v.k;
    });
    MQAJIT_CHECK_KIND(unsupported, known,
                      "variant {}: {} runs mfma32x32x64 / mfma16x16x128 (gfx950) or mfma32x32x16 / mfma16x16x32 "
                      "(gfx942); pick a variant of its own",
                      v.name(), arch.name);
    MQAJIT_CHECK_KIND(unsupported, heads % v.m == 0 && head_dim % v.k == 0 && head_dim % 16 == 0,
                      "variant {} needs heads a multiple of {} and head_dim a multiple of {}; got heads={} head_dim={}",
                      v.name(), v.m, std::max(v.k, 16), heads, head_dim);
    MQAJIT_CHECK_KIND(unsupported, v.bkv % v.m == 0 && (v.bkv * head_dim / 16) % (v.warps * 64) == 0,
                      "variant {}: bkv must be a multiple of {} and split evenly over w x 64 threads", v.name(), v.m);
    MQAJIT_CHECK_KIND(unsupported, v.stages >= 2,
                      "variant {}: _lds<S> must be at least 2 (one LDS buffer is written while another is read)",
                      v.name());
}

std::size_t lds_bytes(const Variant& v, int heads, int head_dim) {
    return static_cast<std::size_t>(mqa_gfx9::gfx9_lds_bytes(heads, head_dim, v.bkv, v.rows, v.warps, v.stages));
}

class Gfx9MfmaFamily final : public KernelFamily {
public:
    std::string name() const override { return "gfx9_mqa_logits"; }
    MatrixOp op() const override { return MatrixOp::mfma; }

    GeneratedKernel generate(const Variant& v, int heads, int head_dim, const Arch& arch) const override {
        check_generatable(v, heads, head_dim, arch);
        return generated_unit(v, heads, head_dim, arch, "gfx9_mqa_logits.cuh", "MQA_GFX9_MQA_LOGITS_KERNEL",
                              fmt::format("{}, {}, {}, {}, {}, {}, {}, {}", heads, head_dim, v.m, v.k, v.bkv, v.rows,
                                          v.warps, v.stages));
    }

    std::size_t shared_bytes(const Variant& v, int heads, int head_dim) const override {
        return lds_bytes(v, heads, head_dim);
    }

    LaunchPlan plan(const Variant& v, const ProblemShape& shape, Device& device,
                    MqaLogitsParams& params) const override {
        check_row_alignment(params, "mfma");
        const std::size_t lds = lds_bytes(v, shape.heads, shape.head_dim);
        MQAJIT_CHECK_KIND(unsupported, lds <= device.max_shared_bytes_per_block(),
                          "variant {} needs {} B of LDS; the device allows {} B per block (lower lds, bkv, r or w)",
                          v.name(), lds, device.max_shared_bytes_per_block());
        const std::int64_t block_rows = std::int64_t{v.rows} * v.warps;
        const std::int64_t num_q_blocks = std::max<std::int64_t>(1, ceil_div(shape.seq_len, block_rows));
        MQAJIT_CHECK(num_q_blocks <= std::numeric_limits<int>::max(),
                     "seq_len {} makes {} q-blocks, over the grid limit; split the call along seq_len",
                     shape.seq_len, num_q_blocks);
        // NOTES: the same split rule as the mma family (two (q-block, split) units per CU, no empty
        // split): the kernels share mqa_common.cuh's tile assignment.
        const int num_splits =
            sm80_kv_splits(num_q_blocks, ceil_div(shape.seq_len_kv, v.bkv), device.multiprocessor_count());

        return unit_grid_plan(params, num_q_blocks, num_splits, static_cast<unsigned>(v.warps * 64), lds);
    }
};

}  // namespace

std::size_t gfx9_max_lds_bytes(const Arch& arch) {
    return arch.vendor == Vendor::amd && arch.number == 950 ? 160 * 1024 : 64 * 1024;
}

const KernelFamily& gfx9_mfma_family() {
    static const Gfx9MfmaFamily family;
    return family;
}

}  // namespace mqajit
