#include <algorithm>

#include "core/check.hpp"
#include "codegen/family_rules.hpp"

namespace mqajit::variant_rules {

bool contains(std::initializer_list<int> allowed, int value) { return std::ranges::find(allowed, value) != allowed.end(); }

std::string join(std::initializer_list<int> allowed) { return fmt::format("{}", fmt::join(allowed, ", ")); }

Support check_problem_size(std::string_view family, int heads, std::initializer_list<int> allowed_heads,
                           int head_dim, std::initializer_list<int> allowed_head_dims) {
    if (!contains(allowed_heads, heads)) {
        return unsupported("{} kernels take heads {}; got heads={}", family, join(allowed_heads), heads);
    }
    if (!contains(allowed_head_dims, head_dim)) {
        return unsupported("{} kernels take head_dim {}; got head_dim={}", family, join(allowed_head_dims), head_dim);
    }
    return supported();
}

std::vector<Variant> parse_all(std::initializer_list<const char*> names) {
    std::vector<Variant> variants;
    variants.reserve(names.size());
    for (const char* name : names) variants.push_back(Variant::parse(name));
    return variants;
}

std::vector<Variant> with_rows_halved(const std::vector<Variant>& variants) {
    std::vector<Variant> halved = variants;
    for (Variant& variant : halved) {
        MQAJIT_CHECK_KIND(internal, variant.rows % 2 == 0, "{} has odd r, so it has no 64-head twin", variant.name());
        variant.rows /= 2;
    }
    return halved;
}

}  // namespace mqajit::variant_rules
