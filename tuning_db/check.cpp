#include "tuning_db/check.hpp"

#include <fmt/format.h>

#include "codegen/family_registry.hpp"
#include "codegen/paged_variant_support.hpp"
#include "codegen/variant_registry.hpp"
#include "mqajit/error.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace mqajit::tuning {

template <class Key>
CheckReportOf<Key> check_config_files(const std::vector<std::filesystem::path>& files) {
    ConfigRowsOf<Key> loaded = load_config_files<Key>(files);
    CheckReportOf<Key> report;
    report.files = std::move(loaded.files);
    report.num_rows = loaded.rows.size();
    report.problems = std::move(loaded.problems);
    report.collisions = std::move(loaded.collisions);
    for (const TunedRowOf<Key>& row : loaded.rows) {
        if (auto problem = unrunnable_problem(row)) report.problems.push_back({row.origin, *problem});
    }
    return report;
}

template <class Key>
void check_rows(const std::vector<TunedRowOf<Key>>& rows, CheckReportOf<Key>& report) {
    report.num_rows += rows.size();
    for (const TunedRowOf<Key>& row : rows) {
        auto problem = row_problem(row);
        if (!problem) problem = unrunnable_problem(row);
        if (problem) report.problems.push_back({fmt::format("{} ({})", row.origin, to_string(row.key)), *problem});
    }
}

std::optional<std::string> unrunnable_problem(const TunedRow& row) {
    if (row.backend != kBackendJit) return std::nullopt;
    try {
        const Arch arch = Arch::parse(row.key.arch);
        const Support support =
            VariantRegistry::instance().supports(arch, row.key.heads, row.key.head_dim, Variant::parse(row.variant));
        if (support) return std::nullopt;
        return fmt::format("variant {} cannot run on {} at heads={} head_dim={}: {}", row.variant, arch.name,
                           row.key.heads, row.key.head_dim, support.reason);
    } catch (const Error& e) {
        return fmt::format("variant {} cannot run on {}: {}", row.variant, row.key.arch, e.what());
    }
}

std::optional<std::string> unrunnable_problem(const PagedTunedRow& row) {
    if (row.backend != kBackendJit) return std::nullopt;
    const PagedShapeKey& key = row.key;
    try {
        const Arch arch = Arch::parse(key.arch);
        const PagedProblem problem{.heads = key.heads, .head_dim = key.head_dim, .next_n = key.next_n,
                                   .block_kv = key.block_kv};
        const Support support = paged_variant_support(arch, problem, Variant::parse(row.variant));
        if (support) return std::nullopt;
        return fmt::format("variant {} cannot run on {} at next_n={} heads={} head_dim={} block_kv={}: {}",
                           row.variant, arch.name, key.next_n, key.heads, key.head_dim, key.block_kv, support.reason);
    } catch (const Error& e) {
        return fmt::format("variant {} cannot run on {}: {}", row.variant, key.arch, e.what());
    }
}

std::optional<std::string> unrunnable_problem(const TopkTunedRow& row) {
    if (row.backend != kBackendJit) return std::nullopt;
    const TopkShapeKey& key = row.key;
    try {
        const Arch arch = Arch::parse(key.arch);
        const Variant variant = Variant::parse(row.variant);
        const KernelOp op = kernel_family_for(variant).kernel_op();
        if (op != KernelOp::mqa_topk && op != KernelOp::mqa_logits) {
            return fmt::format("variant {} is not an mqa_topk kernel: a row names a twgmma variant (the fused path) "
                               "or an mqa_logits variant (the unfused path, with it computing the logits)",
                               row.variant);
        }
        const Support support = VariantRegistry::for_op(op).supports(arch, key.heads, key.head_dim, variant);
        if (support) return std::nullopt;
        return fmt::format("variant {} cannot run on {} at heads={} head_dim={}: {}", row.variant, arch.name,
                           key.heads, key.head_dim, support.reason);
    } catch (const Error& e) {
        return fmt::format("variant {} cannot run on {}: {}", row.variant, key.arch, e.what());
    }
}

template <class Key>
void drop_unrunnable(std::vector<TunedRowOf<Key>>& rows, std::vector<RowProblem>& problems) {
    std::erase_if(rows, [&](const TunedRowOf<Key>& row) {
        auto problem = unrunnable_problem(row);
        if (problem) problems.push_back({row.origin, *problem + "; row skipped"});
        return problem.has_value();
    });
}

#define MQAJIT_CHECK_FOR(Key)                                                                        \
    template CheckReportOf<Key> check_config_files<Key>(const std::vector<std::filesystem::path>&);  \
    template void check_rows(const std::vector<TunedRowOf<Key>>&, CheckReportOf<Key>&);              \
    template void drop_unrunnable(std::vector<TunedRowOf<Key>>&, std::vector<RowProblem>&);
MQAJIT_CHECK_FOR(ShapeKey)
MQAJIT_CHECK_FOR(PagedShapeKey)
MQAJIT_CHECK_FOR(TopkShapeKey)
#undef MQAJIT_CHECK_FOR

}  // namespace mqajit::tuning
