#include "codegen/paged_variant_support.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "codegen/family_registry.hpp"

namespace mqajit {

Support paged_variant_support(const Arch& arch, const PagedProblem& problem, const Variant& variant) {
    const std::vector<const KernelFamily*> families = families_of(KernelOp::paged_mqa_logits);
    for (const KernelFamily* family : families) {
        if (family->op() != variant.op) continue;
        if (Support rules = family->rules().check(arch, problem.heads, problem.head_dim, variant); !rules) return rules;
        const PagedProblemShape shape{.next_n = problem.next_n, .heads = problem.heads, .head_dim = problem.head_dim,
                                      .block_kv = problem.block_kv};
        return paged_family_for(variant).fits(variant, shape);
    }
    std::vector<std::string> ops;
    for (const KernelFamily* family : families) ops.emplace_back(to_string(family->op()));
    return {false, fmt::format("paged_mqa_logits runs {} variants; {} is an mqa_logits ({}) kernel",
                               fmt::join(ops, " or "), variant.name(), to_string(variant.op))};
}

}  // namespace mqajit
