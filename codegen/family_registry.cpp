// The one place that names every kernel family. Adding one: its folder under codegen/families/,
// its #include and one line in its operator's list below.

#include "codegen/family_registry.hpp"

#include <array>

#include "codegen/families/gfx9_mqa_logits/family.hpp"
#include "codegen/families/gfx9_paged_mqa_logits/family.hpp"
#include "codegen/families/sm80_mqa_logits/family.hpp"
#include "codegen/families/sm90_mqa_logits/family.hpp"
#include "codegen/families/sm90_mqa_topk/family.hpp"
#include "codegen/families/sm90_paged_mqa_logits/family.hpp"
#include "core/check.hpp"

namespace mqajit {
namespace {

const std::array<const MqaLogitsFamily*, 3>& mqa_logits_families() {
    static const std::array<const MqaLogitsFamily*, 3> list = {
        &sm90_mqa_logits_family(),
        &sm80_mqa_logits_family(),
        &gfx9_mqa_logits_family(),
    };
    return list;
}

const std::array<const PagedMqaLogitsFamily*, 2>& paged_mqa_logits_families() {
    static const std::array<const PagedMqaLogitsFamily*, 2> list = {
        &sm90_paged_mqa_logits_family(),
        &gfx9_paged_mqa_logits_family(),
    };
    return list;
}

const std::array<const MqaTopkFamily*, 1>& mqa_topk_families() {
    static const std::array<const MqaTopkFamily*, 1> list = {
        &sm90_mqa_topk_family(),
    };
    return list;
}

}  // namespace

std::string_view to_string(KernelOp op) {
    switch (op) {
        case KernelOp::mqa_logits: return "mqa_logits";
        case KernelOp::paged_mqa_logits: return "paged_mqa_logits";
        case KernelOp::mqa_topk: return "mqa_topk";
    }
    return "unknown";
}

std::vector<const KernelFamily*> families_of(KernelOp op) {
    switch (op) {
        case KernelOp::mqa_logits: return {mqa_logits_families().begin(), mqa_logits_families().end()};
        case KernelOp::paged_mqa_logits: return {paged_mqa_logits_families().begin(), paged_mqa_logits_families().end()};
        case KernelOp::mqa_topk: return {mqa_topk_families().begin(), mqa_topk_families().end()};
    }
    MQAJIT_FAIL(internal, "unknown operator {}", static_cast<int>(op));
}

std::vector<const KernelFamily*> all_families() {
    std::vector<const KernelFamily*> all = families_of(KernelOp::mqa_logits);
    for (const KernelFamily* family : families_of(KernelOp::paged_mqa_logits)) all.push_back(family);
    for (const KernelFamily* family : families_of(KernelOp::mqa_topk)) all.push_back(family);
    return all;
}

const KernelFamily& kernel_family_for(const Variant& variant) {
    for (const KernelFamily* family : all_families()) {
        if (family->op() == variant.op) return *family;
    }
    MQAJIT_FAIL(unsupported, "no kernel family generates {} variants (variant {})", to_string(variant.op),
                variant.name());
}

const PagedMqaLogitsFamily& paged_family_for(const Variant& variant) {
    for (const PagedMqaLogitsFamily* family : paged_mqa_logits_families()) {
        if (family->op() == variant.op) return *family;
    }
    MQAJIT_FAIL(unsupported, "no paged_mqa_logits kernel family generates {} variants (variant {}); decode variants "
                "start with pwgmma or pmfma",
                to_string(variant.op), variant.name());
}

const MqaLogitsFamily& family_for(const Variant& variant) {
    for (const MqaLogitsFamily* family : mqa_logits_families()) {
        if (family->op() == variant.op) return *family;
    }
    MQAJIT_FAIL(unsupported, "no mqa_logits kernel family generates {} variants (variant {})", to_string(variant.op),
                variant.name());
}

const MqaTopkFamily& topk_family_for(const Variant& variant) {
    for (const MqaTopkFamily* family : mqa_topk_families()) {
        if (family->op() == variant.op) return *family;
    }
    MQAJIT_FAIL(unsupported, "no mqa_topk kernel family generates {} variants (variant {}); fused top-k variants "
                "start with twgmma",
                to_string(variant.op), variant.name());
}

// The fused top-k family that computes `logits_variant`'s values, if any does.
const MqaTopkFamily* topk_family_twinning(const Variant& logits_variant) {
    for (const MqaTopkFamily* family : mqa_topk_families()) {
        if (family->topk_twin(logits_variant)) return family;
    }
    return nullptr;
}

}  // namespace mqajit
