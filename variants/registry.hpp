#pragma once
// Which variants each arch can run, and why a given one can't.

#include <string>
#include <string_view>
#include <vector>

#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace mqajit {

struct Support {
    bool ok = false;
    std::string reason;  // empty when ok; otherwise what fails and what would work
    explicit operator bool() const { return ok; }
};

class VariantRegistry {
public:
    // The built-in registry (every family's variants for every known arch).
    static const VariantRegistry& instance();

    // Variants registered for an arch, in a stable order; empty for an unknown arch.
    std::vector<Variant> variants(const Arch& arch) const;
    // Variants of an arch that can run at (heads, head_dim).
    std::vector<Variant> variants(const Arch& arch, int heads, int head_dim) const;
    // Whether `variant` can run on `arch` at (heads, head_dim); reason says why not.
    Support supports(const Arch& arch, int heads, int head_dim, const Variant& variant) const;
    // Archs with registered variants.
    std::vector<std::string> archs() const;
};

}  // namespace mqajit
