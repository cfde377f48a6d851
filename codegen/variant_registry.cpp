#include "variants/registry.hpp"

#include <algorithm>
#include <array>
#include <tuple>

#include "core/check.hpp"
#include "variants/family_rules.hpp"

namespace mqajit {
namespace {

using variant_rules::FamilyRules;

// NOTES: the one place that names every family; their order here is the order variants() lists them in.
const std::array<const FamilyRules*, 3>& families() {
    static const std::array<const FamilyRules*, 3> list = {&variant_rules::wgmma_rules(), &variant_rules::mma_rules(),
                                                           &variant_rules::mfma_rules()};
    return list;
}

const FamilyRules& family_of(const Variant& variant) {
    for (const FamilyRules* family : families()) {
        if (family->op() == variant.op) return *family;
    }
    MQAJIT_FAIL(internal, "no family rules for matrix op '{}' (variant {}); add its *_rules.cpp to registry.cpp",
                to_string(variant.op), variant.name());
}

}  // namespace

const VariantRegistry& VariantRegistry::instance() {
    static const VariantRegistry registry;
    return registry;
}

std::vector<Variant> VariantRegistry::variants(const Arch& arch) const {
    std::vector<Variant> all;
    for (const FamilyRules* family : families()) {
        for (const Variant& variant : family->registered(arch)) {
            if (std::ranges::find(all, variant) == all.end()) all.push_back(variant);
        }
    }
    return all;
}

std::vector<Variant> VariantRegistry::variants(const Arch& arch, int heads, int head_dim) const {
    std::vector<Variant> runnable;
    for (const Variant& variant : variants(arch)) {
        if (family_of(variant).check(arch, heads, head_dim, variant)) runnable.push_back(variant);
    }
    return runnable;
}

Support VariantRegistry::supports(const Arch& arch, int heads, int head_dim, const Variant& variant) const {
    const FamilyRules& family = family_of(variant);
    // NOTES: the rules first, so a variant that breaks one hears which, not merely "not registered".
    if (Support rules = family.check(arch, heads, head_dim, variant); !rules) return rules;
    const std::vector<Variant> registered = family.registered(arch);
    if (std::ranges::find(registered, variant) == registered.end()) {
        return {false, fmt::format("not registered for {}; `mqajit variants --arch {}` lists the registered ones",
                                   arch.name, arch.name)};
    }
    return {true, {}};
}

std::vector<std::string> VariantRegistry::archs() const {
    std::vector<Arch> all;
    for (const FamilyRules* family : families()) {
        for (const std::string& name : family->archs()) {
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
