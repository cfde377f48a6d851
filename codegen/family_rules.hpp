#pragma once
// Internal: one kernel family's rules (which archs it serves, which variants it registers, and
// whether a variant can run). registry.cpp composes the families; each lives in its own *_rules.cpp,
// so adding a family means one new file plus one line in registry.cpp's list.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "variants/arch.hpp"
#include "variants/registry.hpp"
#include "variants/variant.hpp"

namespace mqajit::variant_rules {

class FamilyRules {
public:
    virtual ~FamilyRules() = default;
    virtual MatrixOp op() const = 0;
    // Canonical names of the archs this family registers variants for (shown by `mqajit variants`).
    virtual std::vector<std::string> archs() const = 0;
    // The registered variants on `arch` in a stable order; empty when the family does not serve it.
    virtual std::vector<Variant> registered(const Arch& arch) const = 0;
    // Every rule but registration: arch, heads and head_dim, instruction shape, fields, resources.
    // Called only with variants of op().
    virtual Support check(const Arch& arch, int heads, int head_dim, const Variant& variant) const = 0;
};

const FamilyRules& wgmma_rules();  // wgmma_rules.cpp
const FamilyRules& mma_rules();    // mma_rules.cpp
const FamilyRules& mfma_rules();   // mfma_rules.cpp

// Helpers the families share (rules_support.cpp).

inline Support supported() { return {true, {}}; }

template <typename... Args>
Support unsupported(fmt::format_string<Args...> format, Args&&... args) {
    return {false, fmt::format(format, std::forward<Args>(args)...)};
}

bool contains(std::initializer_list<int> allowed, int value);
// "32, 64": how reasons list what is accepted.
std::string join(std::initializer_list<int> allowed);

// Shared reason for heads/head_dim outside a family's lists; ok when both are listed.
Support check_problem_size(std::string_view family, int heads, std::initializer_list<int> allowed_heads,
                           int head_dim, std::initializer_list<int> allowed_head_dims);

// Parses each name (a typo is a bug here, so it fails loudly with the variant's own message).
std::vector<Variant> parse_all(std::initializer_list<const char*> names);
// The same variants with `rows` halved (same N = rows x heads): the 64-head twins of a 32-head list.
std::vector<Variant> with_rows_halved(const std::vector<Variant>& variants);

}  // namespace mqajit::variant_rules
