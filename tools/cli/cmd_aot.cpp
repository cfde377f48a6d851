// mqajit aot --arch A [--variants all|table|NAME...]: compiles kernels into the disk cache with no
// GPU present, reports each one's registers, shared memory and spills, and fails on a spill or on wgmma
// that ptxas had to serialize (on AMD also on scratch use or LDS over the arch's limit).

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "codegen/family_registry.hpp"
#include "codegen/families/gfx9_mqa_logits/family.hpp"
#include "core/log.hpp"
#include "core/settings.hpp"
#include "runtime/backend.hpp"
#include "runtime/kernel_request.hpp"
#include "tools/cli/arch_option.hpp"
#include "tools/cli/commands.hpp"
#include "tuning_db/tuning_db.hpp"
#include "codegen/variant_registry.hpp"

namespace mqajit::cli {
namespace {

struct AotTarget {
    Variant variant;
    int heads;
    int head_dim;
};

// A tuned row `--variants table` cannot build: its variant no longer parses.
struct UnusableRow {
    std::string variant;
    int heads;
    int head_dim;
    std::string error;
};

std::vector<AotTarget> select_targets(const Arch& arch, const std::vector<std::string>& selection,
                                      const std::vector<int>& heads_list, const std::vector<int>& head_dims,
                                      std::vector<UnusableRow>& unusable) {
    std::vector<AotTarget> targets;
    std::set<std::tuple<std::string, int, int>> seen;
    auto add = [&](const Variant& v, int h, int d) {
        if (VariantRegistry::of(v).supports(arch, h, d, v).ok && seen.emplace(v.name(), h, d).second)
            targets.push_back({v, h, d});
    };
    for (const std::string& item : selection) {
        if (item == "all") {
            for (int h : heads_list)
                for (int d : head_dims)
                    for (const KernelOp op : {KernelOp::mqa_logits, KernelOp::paged_mqa_logits})
                        for (const Variant& v : VariantRegistry::for_op(op).variants(arch, h, d)) add(v, h, d);
        } else if (item == "table") {
            // Both operators' tables: the prefill rows, then the decode ones.
            const auto add_rows = [&](const auto& rows) {
                for (const auto& row : rows) {
                    if (row.key.arch != arch.name || row.backend != "jit") continue;
                    // NOTES: one bad row (edited, or from another version) must not stop the others' build.
                    try {
                        add(Variant::parse(row.variant), row.key.heads, row.key.head_dim);
                    } catch (const Error& e) {
                        unusable.push_back({row.variant, row.key.heads, row.key.head_dim,
                                            fmt::format("tuned row {} ({}): variant '{}' does not parse: {}",
                                                        row.origin, to_string(row.key), row.variant, e.what())});
                    }
                }
            };
            add_rows(TuningDb::instance().rows<ShapeKey>());
            add_rows(TuningDb::instance().rows<PagedShapeKey>());
        } else {
            const Variant v = Variant::parse(item);
            bool any = false;
            for (int h : heads_list) {
                for (int d : head_dims) {
                    const Support support = VariantRegistry::of(v).supports(arch, h, d, v);
                    if (support.ok) {
                        add(v, h, d);
                        any = true;
                    } else if (heads_list.size() == 1 && head_dims.size() == 1) {
                        MQAJIT_FAIL(invalid_argument, "{} cannot run on {}: {}", v.name(), arch.name, support.reason);
                    }
                }
            }
            MQAJIT_CHECK(any, "{} runs on {} at none of the requested heads/head_dim", v.name(), arch.name);
        }
    }
    return targets;
}

}  // namespace

void add_aot_command(CLI::App& app, CommandContext& context) {
    struct Options {
        std::optional<std::string> arch;
        std::vector<std::string> variants{"all"};
        std::vector<int> heads{32, 64};
        std::vector<int> head_dims{128};
        bool json = false;
    };
    auto options = std::make_shared<Options>();
    CLI::App* command = app.add_subcommand("aot", "Compile kernels ahead of time into the kernel cache (no GPU needed)");
    command->add_option("--arch", options->arch, "Target arch, e.g. sm_90a (default: MQAJIT_ARCH)");
    command->add_option("--variants", options->variants, "all, table (the tuned rows' variants) or variant names")
        ->expected(1, -1);
    command->add_option("--heads", options->heads, "Head counts to build for")->check(CLI::IsMember({32, 64}));
    command->add_option("--head-dim", options->head_dims, "Head dims to build for")->check(CLI::IsMember({64, 128}));
    command->add_flag("--json", options->json, "Print JSON");
    command->callback([options, &context] {
        const Arch arch = resolve_arch(options->arch);
        std::vector<UnusableRow> unusable;
        const std::vector<AotTarget> targets =
            select_targets(arch, options->variants, options->heads, options->head_dims, unusable);
        MQAJIT_CHECK(!targets.empty() || !unusable.empty(), "no variant to build for {} (try --variants all)", arch.name);
        MQAJIT_CHECK_KIND(not_found, !settings().cache_dir.empty(),
                          "there is no kernel cache folder (neither HOME, XDG_CACHE_HOME nor a passwd home is known); "
                          "set MQAJIT_CACHE_DIR");
        const Compiler& compiler = backend_for(arch).compiler();
        KernelCache cache(DiskCache(settings().cache_dir / "kernels"), 1);

        nlohmann::json rows = nlohmann::json::array();
        int failures = static_cast<int>(unusable.size());
        for (const UnusableRow& row : unusable) {
            rows.push_back({{"variant", row.variant}, {"heads", row.heads}, {"head_dim", row.head_dim},
                            {"status", "FAILED"}, {"error", row.error}});
        }
        const bool amd = arch.vendor == Vendor::amd;
        if (!options->json) {
            fmt::print("compiling {} kernel(s) for {} with {} {} into {}\n", targets.size(), arch.name, compiler.name(),
                       compiler.version(), (settings().cache_dir / "kernels").string());
            if (amd) {
                fmt::print("{:<40} {:>3} {:>4} {:>5} {:>5} {:>5} {:>9} {:>7} {:>6} {:>6} {:>9}  {}\n", "variant", "H", "D",
                           "vgpr", "agpr", "sgpr", "lds B", "scratch", "spillV", "spillS", "ms", "status");
            } else {
                fmt::print("{:<40} {:>3} {:>4} {:>5} {:>9} {:>6} {:>6} {:>9}  {}\n", "variant", "H", "D", "regs",
                           "smem B", "spillS", "spillL", "ms", "status");
            }
        }
        if (!options->json) {
            for (const UnusableRow& row : unusable)
                fmt::print("{:<40} {:>3} {:>4}  FAILED: {}\n", row.variant, row.heads, row.head_dim, row.error);
        }
        for (const AotTarget& t : targets) {
            nlohmann::json row{{"variant", t.variant.name()}, {"heads", t.heads}, {"head_dim", t.head_dim}};
            std::string status;
            try {
                const auto result = cache.compile_ahead_of_time(
                    compiler, kernel_key_for(t.variant, t.heads, t.head_dim, arch, compiler),
                    [&] { return compile_request_for(t.variant, t.heads, t.head_dim, arch); });
                const std::size_t smem = kernel_family_for(t.variant).shared_bytes(t.variant, t.heads, t.head_dim) +
                                         static_cast<std::size_t>(std::max(0, result.usage.shared_bytes));
                // NOTES: on AMD, scratch without spills is a private array the compiler could not keep in
                // registers: as slow as a spill, so it fails too; LDS is checked against the arch here
                // because AMD has no per-device opt-in limit to ask.
                const bool over_lds = amd && smem > gfx9_max_lds_bytes(arch);
                const bool scratch = amd && result.usage.scratch_bytes > 0;
                const bool no_report = result.usage.registers < 0;
                status = no_report ? "NO REPORT"
                         : result.usage.spills() ? "SPILL"
                         : result.usage.wgmma_serialized ? "SERIALIZED"
                         : over_lds            ? "LDS"
                         : scratch             ? "SCRATCH"
                                               : (result.from_cache ? "cached" : "built");
                if (no_report || result.usage.spills() || result.usage.wgmma_serialized || over_lds || scratch) ++failures;
                row.update({{"registers", result.usage.registers}, {"shared_bytes", smem},
                            {"spill_store_bytes", result.usage.spill_store_bytes},
                            {"spill_load_bytes", result.usage.spill_load_bytes}, {"compile_ms", result.compile_ms},
                            {"from_cache", result.from_cache}, {"entry", result.entry.string()}, {"status", status}});
                if (amd) {
                    row.update({{"agprs", result.usage.agprs}, {"sgprs", result.usage.sgprs},
                                {"vgpr_spills", result.usage.vgpr_spills}, {"sgpr_spills", result.usage.sgpr_spills},
                                {"scratch_bytes", result.usage.scratch_bytes}});
                }
                if (!options->json && amd) {
                    fmt::print("{:<40} {:>3} {:>4} {:>5} {:>5} {:>5} {:>9} {:>7} {:>6} {:>6} {:>9.0f}  {}\n",
                               t.variant.name(), t.heads, t.head_dim, result.usage.registers, result.usage.agprs,
                               result.usage.sgprs, smem, result.usage.scratch_bytes, result.usage.vgpr_spills,
                               result.usage.sgpr_spills, result.compile_ms, status);
                } else if (!options->json) {
                    fmt::print("{:<40} {:>3} {:>4} {:>5} {:>9} {:>6} {:>6} {:>9.0f}  {}\n", t.variant.name(), t.heads,
                               t.head_dim, result.usage.registers, smem, result.usage.spill_store_bytes,
                               result.usage.spill_load_bytes, result.compile_ms, status);
                }
            } catch (const Error& e) {
                ++failures;
                row.update({{"status", "FAILED"}, {"error", e.what()}});
                if (!options->json) fmt::print("{:<40} {:>3} {:>4}  FAILED: {}\n", t.variant.name(), t.heads, t.head_dim, e.what());
            }
            rows.push_back(row);
        }
        if (options->json) {
            fmt::print("{}\n", rows.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
        } else {
            fmt::print("{} of {} kernel(s) ok{}\n", targets.size() + unusable.size() - failures,
                       targets.size() + unusable.size(),
                       failures ? "; spills, serialized wgmma, missing compiler reports (NO REPORT: the compiler served the kernel from "
                                  "its own cache; run with CUDA_CACHE_DISABLE=1) or compile failures above"
                                : "");
        }
        context.exit_code = failures ? kCheckFailed : kOk;
    });
}

}  // namespace mqajit::cli
