// The sm90_mqa_topk family: the sm90 prefill kernel with the candidate epilogue (sm90_mqa_topk.cuh).
// Source and launch plan are its wgmma twin's, so the candidates carry the values that twin's
// mqa_logits() call computes; its shared memory is the twin's plus the epilogue's stage.

#include "codegen/families/sm90_mqa_topk/family.hpp"

#include <fmt/format.h>

#include "codegen/families/sm90_mqa_logits/family.hpp"
#include "codegen/families/sm90_mqa_logits/resources.hpp"
#include "codegen/family_support.hpp"

namespace mqajit {
namespace {

class Sm90MqaTopkFamily final : public MqaTopkFamily {
public:
    std::string name() const override { return "sm90_mqa_topk"; }
    MatrixOp op() const override { return MatrixOp::twgmma; }
    const FamilyRules& rules() const override { return sm90_mqa_topk_rules(); }

    GeneratedKernel generate(const Variant& v, int heads, int head_dim, const Arch& arch) const override {
        check_generatable(*this, v, heads, head_dim, arch);
        return generated_unit(v, heads, head_dim, arch, "sm90_mqa_topk.cuh", "MQA_SM90_TOPK_KERNEL",
                              fmt::format("{}, {}, {}, {}, {}, {}", heads, head_dim, v.bkv, v.rows, v.warps, v.stages));
    }

    std::size_t shared_bytes(const Variant& v, int heads, int head_dim) const override {
        return static_cast<std::size_t>(sm90_topk_shared_bytes(v, heads, head_dim));
    }

    LaunchPlan plan(const Variant& v, const ProblemShape& shape, const DeviceLimits& limits,
                    const MqaLogitsParams& params) const override {
        LaunchPlan plan = twin().plan(logits_twin(v), shape, limits, params);
        plan.config.dynamic_shared_bytes = shared_bytes(v, shape.heads, shape.head_dim);
        check_shared_bytes(v, plan.config.dynamic_shared_bytes, limits, "shared memory", "lower lds or bkv");
        return plan;
    }

    Variant logits_twin(const Variant& v) const override { return with_op(v, MatrixOp::wgmma); }

    std::optional<Variant> topk_twin(const Variant& logits_variant) const override {
        if (logits_variant.op != MatrixOp::wgmma) return std::nullopt;
        return with_op(logits_variant, MatrixOp::twgmma);
    }

private:
    static const MqaLogitsFamily& twin() { return sm90_mqa_logits_family(); }
};

}  // namespace

std::int64_t sm90_topk_stage_bytes(const Variant& variant) {
    const std::int64_t warps = 4 * std::int64_t{variant.warps};
    const std::int64_t entries = kSm90TopkStageTiles * 16 * std::int64_t{variant.bkv / 64};
    return warps * variant.rows * (entries * 8 + 4);
}

std::int64_t sm90_topk_shared_bytes(const Variant& variant, int heads, int head_dim) {
    return wgmma_shared_bytes(with_op(variant, MatrixOp::wgmma), heads, head_dim) + sm90_topk_stage_bytes(variant);
}

const MqaTopkFamily& sm90_mqa_topk_family() {
    static const Sm90MqaTopkFamily family;
    return family;
}

}  // namespace mqajit
