#pragma once
// One kernel family's rules: which archs it serves, which variants it registers, and whether a
// variant can run. Each family writes its own in codegen/families/<name>/rules.cpp; the variant
// registry asks every family of an operator (codegen/variant_registry.hpp).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <initializer_list>
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

class FamilyRules {
public:
    virtual ~FamilyRules() = default;
    // Canonical names of the archs this family registers variants for (shown by `mqajit variants`).
    virtual std::vector<std::string> archs() const = 0;
    // The registered variants on `arch` in a stable order; empty when the family does not serve it.
    virtual std::vector<Variant> registered(const Arch& arch) const = 0;
    // Every rule but registration: arch, heads and head_dim, instruction shape, fields, resources
    // (with the same resource math the generator and the launch use), and what the template can
    // build. Called only with variants of the family's matrix op.
    virtual Support check(const Arch& arch, int heads, int head_dim, const Variant& variant) const = 0;
};

}  // namespace mqajit

// Helpers the families' rules share (family_rules.cpp).
namespace mqajit::variant_rules {

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
