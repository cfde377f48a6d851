// The gfx9_mqa_logits family: fp8 MFMA on AMD gfx942 and gfx950 (gfx9_mqa_logits.cuh in this
// folder), compiled as HIP by clang ahead of time (runtime/compiler_clang_hip.cpp) or by hiprtc.

#include "codegen/families/gfx9_mqa_logits/family.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "codegen/families/gfx9_mqa_logits/gfx9_mqa_logits.cuh"
#include "codegen/family_support.hpp"
#include "codegen/grid_plan.hpp"
#include "core/check.hpp"

namespace mqajit {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

class Gfx9MqaLogitsFamily final : public MqaLogitsFamily {
public:
    std::string name() const override { return "gfx9_mqa_logits"; }
    MatrixOp op() const override { return MatrixOp::mfma; }
    const FamilyRules& rules() const override { return gfx9_mqa_logits_rules(); }

    GeneratedKernel generate(const Variant& v, int heads, int head_dim, const Arch& arch) const override {
        check_generatable(*this, v, heads, head_dim, arch);
        return generated_unit(v, heads, head_dim, arch, "gfx9_mqa_logits.cuh", "MQA_GFX9_MQA_LOGITS_KERNEL",
                              fmt::format("{}, {}, {}, {}, {}, {}, {}, {}", heads, head_dim, v.m, v.k, v.bkv, v.rows,
                                          v.warps, v.stages));
    }

    std::size_t shared_bytes(const Variant& v, int heads, int head_dim) const override {
        return gfx9_lds_bytes(v, heads, head_dim);
    }

    LaunchPlan plan(const Variant& v, const ProblemShape& shape, const DeviceLimits& device,
                    const MqaLogitsParams& params) const override {
        check_row_alignment(params, "mfma");
        const std::size_t lds = gfx9_lds_bytes(v, shape.heads, shape.head_dim);
        check_shared_bytes(v, lds, device, "LDS", "(lower lds, bkv, r or w)");
        const std::int64_t block_rows = std::int64_t{v.rows} * v.warps;
        const std::int64_t num_q_blocks = std::max<std::int64_t>(1, ceil_div(shape.seq_len, block_rows));
        MQAJIT_CHECK(num_q_blocks <= std::numeric_limits<int>::max(),
                     "seq_len {} makes {} q-blocks, over the grid limit; split the call along seq_len",
                     shape.seq_len, num_q_blocks);
        // NOTES: the mma family's split rule (two (q-block, split) units per CU, no empty split): the
        // kernels share mqa_common.cuh's tile assignment.
        const int num_splits = unit_kv_splits(num_q_blocks, ceil_div(shape.seq_len_kv, v.bkv), device.multiprocessors);
        return unit_grid_plan(num_q_blocks, num_splits, static_cast<unsigned>(v.warps * 64), lds);
    }
};

}  // namespace

std::size_t gfx9_lds_bytes(const Variant& v, int heads, int head_dim) {
    return static_cast<std::size_t>(mqa_gfx9::gfx9_lds_bytes(heads, head_dim, v.bkv, v.rows, v.warps, v.stages));
}

const MqaLogitsFamily& gfx9_mqa_logits_family() {
    static const Gfx9MqaLogitsFamily family;
    return family;
}

}  // namespace mqajit
