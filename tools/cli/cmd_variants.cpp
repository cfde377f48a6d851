// `mqajit variants`: the registered variants per arch and, given a problem size, which can run there.

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/check.hpp"
#include "core/settings.hpp"
#include "tools/cli/commands.hpp"
#include "codegen/variant_registry.hpp"

namespace mqajit::cli {
namespace {

struct VariantsOptions {
    std::string arch;
    int heads = 0;
    int head_dim = 0;
    bool json = false;
    std::string op = "mqa_logits";
    CLI::Option* arch_option = nullptr;
    CLI::Option* heads_option = nullptr;
};

struct ProblemSize {
    int heads;
    int head_dim;
};

struct Row {
    std::string arch;
    Variant variant;
    std::optional<Support> support;  // set when a problem size was given
};

const VariantRegistry& selected_registry(const VariantsOptions& options) {
    if (options.op == "paged_mqa_logits") return VariantRegistry::for_op(KernelOp::paged_mqa_logits);
    if (options.op == "mqa_topk") return VariantRegistry::for_op(KernelOp::mqa_topk);
    return VariantRegistry::for_op(KernelOp::mqa_logits);
}

std::vector<Arch> selected_archs(const VariantsOptions& options) {
    if (options.arch_option->count() > 0) return {Arch::parse(options.arch)};
    if (const auto& override_arch = settings().arch_override) {
        try {
            return {Arch::parse(*override_arch)};
        } catch (const Error& e) {
            MQAJIT_FAIL(invalid_argument, "MQAJIT_ARCH: {}", e.what());
        }
    }
    std::vector<Arch> all;
    for (const std::string& name : selected_registry(options).archs()) all.push_back(Arch::parse(name));
    return all;
}

std::vector<Row> collect_rows(const VariantRegistry& registry, const std::vector<Arch>& archs,
                              const std::optional<ProblemSize>& size) {
    std::vector<Row> rows;
    for (const Arch& arch : archs) {
        const std::vector<Variant> variants = registry.variants(arch);
        if (variants.empty()) {
            MQAJIT_FAIL(unsupported, "{} has no registered variants; archs that have some: {}", arch.name,
                        fmt::join(registry.archs(), ", "));
        }
        for (const Variant& variant : variants) {
            Row row{.arch = arch.name, .variant = variant, .support = std::nullopt};
            if (size) row.support = registry.supports(arch, size->heads, size->head_dim, variant);
            rows.push_back(std::move(row));
        }
    }
    return rows;
}

void print_json(const std::vector<Row>& rows, const std::optional<ProblemSize>& size) {
    nlohmann::ordered_json array = nlohmann::ordered_json::array();
    for (const Row& row : rows) {
        nlohmann::ordered_json entry = {{"arch", row.arch}, {"variant", row.variant.name()}, {"op", to_string(row.variant.op)}};
        if (size) {
            entry["heads"] = size->heads;
            entry["head_dim"] = size->head_dim;
            entry["supported"] = row.support->ok;
            entry["reason"] = row.support->reason;
        }
        array.push_back(std::move(entry));
    }
    fmt::print("{}\n", array.dump(2));
}

void print_table(const std::vector<Row>& rows, const std::optional<ProblemSize>& size) {
    std::size_t arch_width = std::string_view("ARCH").size();
    std::size_t variant_width = std::string_view("VARIANT").size();
    for (const Row& row : rows) {
        arch_width = std::max(arch_width, row.arch.size());
        variant_width = std::max(variant_width, row.variant.name().size());
    }
    if (size) {
        fmt::print("{:<{}}  {:<{}}  {:<4}  {}\n", "ARCH", arch_width, "VARIANT", variant_width, "RUNS",
                   fmt::format("REASON (heads={}, head_dim={})", size->heads, size->head_dim));
    } else {
        fmt::print("{:<{}}  {}\n", "ARCH", arch_width, "VARIANT");
    }
    for (const Row& row : rows) {
        std::string line;
        if (row.support) {
            line = fmt::format("{:<{}}  {:<{}}  {:<4}  {}", row.arch, arch_width, row.variant.name(), variant_width,
                               row.support->ok ? "yes" : "no", row.support->reason);
        } else {
            line = fmt::format("{:<{}}  {}", row.arch, arch_width, row.variant.name());
        }
        line.erase(line.find_last_not_of(' ') + 1);
        fmt::print("{}\n", line);
    }
}

void run_variants(const VariantsOptions& options) {
    std::optional<ProblemSize> size;
    if (options.heads_option->count() > 0) size = ProblemSize{options.heads, options.head_dim};
    const std::vector<Row> rows = collect_rows(selected_registry(options), selected_archs(options), size);
    if (options.json) {
        print_json(rows, size);
    } else {
        print_table(rows, size);
    }
}

}  // namespace

void add_variants_command(CLI::App& app, CommandContext& context) {
    auto options = std::make_shared<VariantsOptions>();
    CLI::App* command = app.add_subcommand(
        "variants", "List the registered kernel variants per arch; with --heads and --head-dim, whether each can run");
    options->arch_option = command->add_option(
        "--arch", options->arch, "Arch to list, e.g. sm_90a or gfx950 (default: MQAJIT_ARCH, else every known arch)");
    options->heads_option = command->add_option("--heads", options->heads, "Query heads (H), e.g. 32 or 64")
                                ->check(CLI::PositiveNumber);
    CLI::Option* head_dim_option = command->add_option("--head-dim", options->head_dim, "Head dimension (D), e.g. 128")
                                       ->check(CLI::PositiveNumber);
    options->heads_option->needs(head_dim_option);
    head_dim_option->needs(options->heads_option);
    command->add_flag("--json", options->json, "Print a JSON array instead of a table");
    add_op_option(*command, options->op, true);
    command->callback([options, &context] {
        run_variants(*options);
        context.exit_code = kOk;
    });
}

}  // namespace mqajit::cli
