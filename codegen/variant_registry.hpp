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
    // Archs with registered variants, NVIDIA before AMD, older before newer.
    std::vector<std::string> archs() const;
};

// The pre-built baseline's variant for `heads` (an mma16x8x16 variant that every sm_80+ GPU runs):
// mma16x8x16_bkv64_r4_w4_lds2 for 32 heads, mma16x8x16_bkv64_r2_w4_lds2 for 64.
// Throws Error(unsupported) for other head counts.
Variant baseline_variant(int heads);

}  // namespace mqajit
