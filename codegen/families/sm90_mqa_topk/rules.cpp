// The sm90_mqa_topk family's rules: those of its wgmma twin (the kernel is the same but for the
// epilogue), and room for the epilogue's stage in shared memory past the twin's.
//   twgmma64x<N>x32_bkv<B>_r<R>_w<W>_lds<S>

#include "codegen/families/sm90_mqa_logits/family.hpp"
#include "codegen/families/sm90_mqa_logits/resources.hpp"
#include "codegen/families/sm90_mqa_topk/family.hpp"

namespace mqajit::variant_rules {
namespace {

class TopkWgmmaRules final : public FamilyRules {
public:
    std::vector<std::string> archs() const override { return twin().archs(); }

    std::vector<Variant> registered(const Arch& arch) const override {
        std::vector<Variant> all;
        for (const Variant& v : twin().registered(arch)) all.push_back(with_op(v, MatrixOp::twgmma));
        return all;
    }

    Support check(const Arch& arch, int heads, int head_dim, const Variant& v) const override {
        if (v.op != MatrixOp::twgmma) {
            return unsupported("mqa_topk's fused kernel runs twgmma variants; {} is another operator's", v.name());
        }
        const Support twin_support = twin().check(arch, heads, head_dim, with_op(v, MatrixOp::wgmma));
        if (!twin_support.ok) return twin_support;
        const std::int64_t bytes = sm90_topk_shared_bytes(v, heads, head_dim);
        if (bytes > kSm90MaxSharedBytes) {
            return unsupported("shared memory {} B with the candidate stage exceeds {} B (227 KiB on sm_90a); lower lds or bkv",
                               bytes, kSm90MaxSharedBytes);
        }
        return supported();
    }

private:
    static const FamilyRules& twin() { return sm90_mqa_logits_rules(); }
};

}  // namespace
}  // namespace mqajit::variant_rules

namespace mqajit {

Variant with_op(Variant variant, MatrixOp op) {
    variant.op = op;
    return variant;
}

const FamilyRules& sm90_mqa_topk_rules() {
    static const variant_rules::TopkWgmmaRules rules;
    return rules;
}

}  // namespace mqajit
