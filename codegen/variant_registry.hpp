#pragma once
// Which variants each arch can run, and why a given one can't: the rules of every kernel family
// of one operator (codegen/family_registry.hpp lists them).

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/family_rules.hpp"
#include "codegen/kernel_family.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace mqajit {

class VariantRegistry {
public:
    // The mqa_logits operator's registry.
    static const VariantRegistry& instance();
    // The registry of `op`'s families.
    static const VariantRegistry& for_op(KernelOp op);
    // The registry of the operator whose family generates `variant`; throws Error(unsupported) if none.
    static const VariantRegistry& of(const Variant& variant);

    explicit VariantRegistry(std::vector<const KernelFamily*> families);

    // Variants registered for an arch, in a stable order; empty for an unknown arch.
    std::vector<Variant> variants(const Arch& arch) const;
    // Variants of an arch that can run at (heads, head_dim).
    std::vector<Variant> variants(const Arch& arch, int heads, int head_dim) const;
    // Whether `variant` can run on `arch` at (heads, head_dim); reason says why not.
    Support supports(const Arch& arch, int heads, int head_dim, const Variant& variant) const;
    // Archs with registered variants, NVIDIA before AMD, older before newer.
    std::vector<std::string> archs() const;

private:
    const KernelFamily* find_family(const Variant& variant) const;  // nullptr: another operator's
    const KernelFamily& family_of(const Variant& variant) const;
    std::string matrix_ops() const;  // "wgmma, mma, mfma"

    std::vector<const KernelFamily*> families_;
};

}  // namespace mqajit
