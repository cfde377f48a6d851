// The sm90_mqa_topk family: the sm90 prefill kernel with the candidate epilogue (sm90_mqa_topk.cuh).
// Source, shared memory and launch plan are its wgmma twin's, so the candidates carry the values
// that twin's mqa_logits() call computes.

#include "codegen/families/sm90_mqa_topk/family.hpp"

#include <fmt/format.h>

#include "codegen/families/sm90_mqa_logits/family.hpp"
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
        return twin().shared_bytes(logits_twin(v), heads, head_dim);
    }

    LaunchPlan plan(const Variant& v, const ProblemShape& shape, const DeviceLimits& limits,
                    const MqaLogitsParams& params) const override {
        return twin().plan(logits_twin(v), shape, limits, params);
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

const MqaTopkFamily& sm90_mqa_topk_family() {
    static const Sm90MqaTopkFamily family;
    return family;
}

}  // namespace mqajit
