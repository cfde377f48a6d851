// The sm80_mqa_logits family: mma.sync with cp.async, sm_80 and newer (sm80_mqa_logits.cuh in this folder).

#include "codegen/families/sm80_mqa_logits/family.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "codegen/families/sm80_mqa_logits/sm80_mqa_logits.cuh"
#include "codegen/family_support.hpp"
#include "codegen/grid_plan.hpp"
#include "core/check.hpp"

namespace mqajit {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

class Sm80MqaLogitsFamily final : public MqaLogitsFamily {
public:
    std::string name() const override { return "sm80_mqa_logits"; }
    MatrixOp op() const override { return MatrixOp::mma; }
    const FamilyRules& rules() const override { return sm80_mqa_logits_rules(); }

    GeneratedKernel generate(const Variant& v, int heads, int head_dim, const Arch& arch) const override {
        check_generatable(*this, v, heads, head_dim, arch);
        return generated_unit(v, heads, head_dim, arch, "sm80_mqa_logits.cuh", "MQA_SM80_MQA_LOGITS_KERNEL",
                              fmt::format("{}, {}, {}, {}, {}, {}, {}", heads, head_dim, v.bkv, v.rows, v.warps,
                                          v.stages, v.k == 32 ? "true" : "false"));
    }

    std::size_t shared_bytes(const Variant& v, int heads, int head_dim) const override {
        return sm80_shared_bytes(v, heads, head_dim);
    }

    LaunchPlan plan(const Variant& v, const ProblemShape& shape, const DeviceLimits& device,
                    const MqaLogitsParams& params) const override {
        check_row_alignment(params, "mma");
        const std::size_t smem = sm80_shared_bytes(v, shape.heads, shape.head_dim);
        check_shared_bytes(v, smem, device, "shared memory", "(lower lds, bkv or r)");
        const std::int64_t num_q_blocks = std::max<std::int64_t>(1, ceil_div(shape.seq_len, v.rows));
        MQAJIT_CHECK(num_q_blocks <= std::numeric_limits<int>::max(),
                     "seq_len {} makes {} q-blocks, over the grid limit; split the call along seq_len",
                     shape.seq_len, num_q_blocks);
        const std::int64_t num_tiles = ceil_div(shape.seq_len_kv, v.bkv);
        const int num_splits = unit_kv_splits(num_q_blocks, num_tiles, device.multiprocessors);
        return unit_grid_plan(num_q_blocks, num_splits, static_cast<unsigned>(v.warps * 32), smem);
    }
};

}  // namespace

std::size_t sm80_shared_bytes(const Variant& v, int heads, int head_dim) {
    return static_cast<std::size_t>(
        mqa_sm80::shared_layout(heads, head_dim, v.bkv, v.rows, v.warps, v.stages).total_bytes);
}

const MqaLogitsFamily& sm80_mqa_logits_family() {
    static const Sm80MqaLogitsFamily family;
    return family;
}

}  // namespace mqajit
