#include "codegen/variant_registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <tuple>

#include "codegen/family_registry.hpp"
#include "core/check.hpp"

namespace mqajit {
namespace {

std::string_view describe(KernelOp op) {
    switch (op) {
        case KernelOp::mqa_logits: return "mqa_logits (prefill)";
        case KernelOp::paged_mqa_logits: return "paged_mqa_logits (decode)";
        case KernelOp::mqa_topk: return "mqa_topk (fused top-k)";
    }
    return "unknown operator's";
}

}  // namespace

const VariantRegistry& VariantRegistry::instance() { return for_op(KernelOp::mqa_logits); }

const VariantRegistry& VariantRegistry::for_op(KernelOp op) {
    switch (op) {
        case KernelOp::mqa_logits: {
            static const VariantRegistry registry(families_of(KernelOp::mqa_logits));
            return registry;
        }
        case KernelOp::paged_mqa_logits: {
            static const VariantRegistry registry(families_of(KernelOp::paged_mqa_logits));
            return registry;
        }
        case KernelOp::mqa_topk: {
            static const VariantRegistry registry(families_of(KernelOp::mqa_topk));
            return registry;
        }
    }
    MQAJIT_FAIL(internal, "no variant registry for operator {}", static_cast<int>(op));
}

const VariantRegistry& VariantRegistry::of(const Variant& variant) {
    return for_op(kernel_family_for(variant).kernel_op());
}

VariantRegistry::VariantRegistry(std::vector<const KernelFamily*> families) : families_(std::move(families)) {}

const KernelFamily* VariantRegistry::find_family(const Variant& variant) const {
    for (const KernelFamily* family : families_) {
        if (family->op() == variant.op) return family;
    }
    return nullptr;
}

std::string VariantRegistry::matrix_ops() const {
    std::vector<std::string> ops;
    for (const KernelFamily* family : families_) {
        const std::string op(to_string(family->op()));
        if (std::ranges::find(ops, op) == ops.end()) ops.push_back(op);
    }
    return fmt::format("{}", fmt::join(ops, ", "));
}

const KernelFamily& VariantRegistry::family_of(const Variant& variant) const {
    if (const KernelFamily* family = find_family(variant)) return *family;
    MQAJIT_FAIL(unsupported, "no kernel family generates {} variants (variant {}); `mqajit variants` lists those there are",
                to_string(variant.op), variant.name());
}

std::vector<Variant> VariantRegistry::variants(const Arch& arch) const {
    std::vector<Variant> all;
    for (const KernelFamily* family : families_) {
        for (const Variant& variant : family->rules().registered(arch)) {
            if (std::ranges::find(all, variant) == all.end()) all.push_back(variant);
        }
    }
    return all;
}

std::vector<Variant> VariantRegistry::variants(const Arch& arch, int heads, int head_dim) const {
    std::vector<Variant> runnable;
    for (const Variant& variant : variants(arch)) {
        if (family_of(variant).rules().check(arch, heads, head_dim, variant)) runnable.push_back(variant);
    }
    return runnable;
}

Support VariantRegistry::supports(const Arch& arch, int heads, int head_dim, const Variant& variant) const {
    const KernelFamily* family = find_family(variant);
    // NOTES: a variant of another operator names a real kernel: a refusal, not a bug.
    if (family == nullptr) {
        return {false, fmt::format("{} is a {} kernel; this operator runs {} variants", variant.name(),
                                   describe(kernel_family_for(variant).kernel_op()), matrix_ops())};
    }
    const FamilyRules& rules = family->rules();
    // NOTES: the rules first, so a variant that breaks one hears which, not merely "not registered".
    if (Support checked = rules.check(arch, heads, head_dim, variant); !checked) return checked;
    const std::vector<Variant> registered = rules.registered(arch);
    if (std::ranges::find(registered, variant) == registered.end()) {
        return {false, fmt::format("not registered for {}; `mqajit variants --arch {}` lists the registered ones",
                                   arch.name, arch.name)};
    }
    return {true, {}};
}

std::vector<std::string> VariantRegistry::archs() const {
    std::vector<Arch> all;
    for (const KernelFamily* family : families_) {
        for (const std::string& name : family->rules().archs()) {
            Arch arch = Arch::parse(name);
            if (std::ranges::find(all, arch) == all.end()) all.push_back(std::move(arch));
        }
    }
    std::ranges::sort(all, {}, [](const Arch& a) { return std::tuple(a.vendor, a.number, a.arch_specific); });
    std::vector<std::string> names;
    for (const Arch& arch : all) names.push_back(arch.name);
    return names;
}

}  // namespace mqajit
