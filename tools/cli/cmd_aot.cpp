// mqajit aot --arch A [--variants all|table|NAME...] [-j N]: compiles kernels into the disk cache with
// no GPU present, N at a time, reports each one's registers, shared memory and spills as it finishes
// (with a count and an ETA), and fails on a spill or on wgmma that ptxas had to serialize (on AMD
// also on scratch use or LDS over the arch's limit).

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "codegen/family_registry.hpp"
#include "codegen/families/gfx9_mqa_logits/family.hpp"
#include "core/log.hpp"
#include "core/settings.hpp"
#include "runtime/backend.hpp"
#include "runtime/kernel_request.hpp"
#include "tools/cli/arch_option.hpp"
#include "tools/cli/commands.hpp"
#include "tools/common/progress.hpp"
#include "tuning_db/tuning_db.hpp"
#include "codegen/variant_registry.hpp"

namespace mqajit::cli {
namespace {

using tools::Progress;

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
                    for (const KernelOp op : {KernelOp::mqa_logits, KernelOp::paged_mqa_logits, KernelOp::mqa_topk})
                        for (const Variant& v : VariantRegistry::for_op(op).variants(arch, h, d)) add(v, h, d);
        } else if (item == "table") {
            // Every operator's table: the prefill rows, the decode ones, then mqa_topk's.
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
            add_rows(TuningDb::instance().rows<TopkShapeKey>());
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

// One kernel's outcome: its JSON row, its table line, whether it fails the run.
struct AotOutcome {
    nlohmann::json row;
    std::string line;
    bool failed = false;
};

AotOutcome build_kernel(const AotTarget& t, const Arch& arch, const Compiler& compiler, KernelCache& cache) {
    AotOutcome outcome;
    outcome.row = {{"variant", t.variant.name()}, {"heads", t.heads}, {"head_dim", t.head_dim}};
    const bool amd = arch.vendor == Vendor::amd;
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
        const std::string status = no_report                    ? "NO REPORT"
                                   : result.usage.spills()      ? "SPILL"
                                   : result.usage.wgmma_serialized ? "SERIALIZED"
                                   : over_lds                   ? "LDS"
                                   : scratch                    ? "SCRATCH"
                                                                : (result.from_cache ? "cached" : "built");
        outcome.failed = no_report || result.usage.spills() || result.usage.wgmma_serialized || over_lds || scratch;
        outcome.row.update({{"registers", result.usage.registers}, {"shared_bytes", smem},
                            {"spill_store_bytes", result.usage.spill_store_bytes},
                            {"spill_load_bytes", result.usage.spill_load_bytes}, {"compile_ms", result.compile_ms},
                            {"from_cache", result.from_cache}, {"entry", result.entry.string()}, {"status", status}});
        if (amd) {
            outcome.row.update({{"agprs", result.usage.agprs}, {"sgprs", result.usage.sgprs},
                                {"vgpr_spills", result.usage.vgpr_spills}, {"sgpr_spills", result.usage.sgpr_spills},
                                {"scratch_bytes", result.usage.scratch_bytes}});
            outcome.line = fmt::format("{:<40} {:>3} {:>4} {:>5} {:>5} {:>5} {:>9} {:>7} {:>6} {:>6} {:>9.0f}  {}",
                                       t.variant.name(), t.heads, t.head_dim, result.usage.registers,
                                       result.usage.agprs, result.usage.sgprs, smem, result.usage.scratch_bytes,
                                       result.usage.vgpr_spills, result.usage.sgpr_spills, result.compile_ms, status);
        } else {
            outcome.line = fmt::format("{:<40} {:>3} {:>4} {:>5} {:>9} {:>6} {:>6} {:>9.0f}  {}", t.variant.name(),
                                       t.heads, t.head_dim, result.usage.registers, smem,
                                       result.usage.spill_store_bytes, result.usage.spill_load_bytes,
                                       result.compile_ms, status);
        }
    } catch (const std::exception& e) {  // NOTES: on a worker thread nothing may escape
        outcome.failed = true;
        outcome.row.update({{"status", "FAILED"}, {"error", e.what()}});
        outcome.line = fmt::format("{:<40} {:>3} {:>4}  FAILED: {}", t.variant.name(), t.heads, t.head_dim, e.what());
    }
    return outcome;
}

// Builds every target on `jobs` threads; each finished kernel reports to `progress` at once.
std::vector<AotOutcome> build_kernels(const std::vector<AotTarget>& targets, const Arch& arch, const Compiler& compiler,
                                      KernelCache& cache, unsigned jobs, Progress& progress) {
    std::vector<AotOutcome> outcomes(targets.size());
    std::atomic<std::size_t> next{0};
    std::mutex progress_mutex;
    auto work = [&] {
        for (std::size_t i = next++; i < targets.size(); i = next++) {
            outcomes[i] = build_kernel(targets[i], arch, compiler, cache);
            const std::lock_guard lock(progress_mutex);
            progress.step_done(outcomes[i].line);
        }
    };
    std::vector<std::jthread> workers;
    for (unsigned j = 1; j < std::min<std::size_t>(jobs, targets.size()); ++j) workers.emplace_back(work);
    work();
    return outcomes;
}

}  // namespace

void add_aot_command(CLI::App& app, CommandContext& context) {
    struct Options {
        std::optional<std::string> arch;
        std::vector<std::string> variants{"all"};
        std::vector<int> heads{32, 64};
        std::vector<int> head_dims{128};
        unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
        bool json = false;
    };
    auto options = std::make_shared<Options>();
    CLI::App* command = app.add_subcommand("aot", "Compile kernels ahead of time into the kernel cache (no GPU needed)");
    command->add_option("--arch", options->arch, "Target arch, e.g. sm_90a (default: MQAJIT_ARCH)");
    command->add_option("--variants", options->variants, "all, table (the tuned rows' variants) or variant names")
        ->expected(1, -1);
    command->add_option("--heads", options->heads, "Head counts to build for")->check(CLI::IsMember({32, 64}));
    command->add_option("--head-dim", options->head_dims, "Head dims to build for")->check(CLI::IsMember({64, 128}));
    command->add_option("-j,--jobs", options->jobs, "Kernels compiled at once (default: the CPU count)")
        ->check(CLI::Range(1u, 1024u));
    command->add_flag("--json", options->json, "Print JSON (progress goes to stderr)");
    command->callback([options, &context] {
        const Arch arch = resolve_arch(options->arch);
        std::vector<UnusableRow> unusable;
        const std::vector<AotTarget> targets =
            select_targets(arch, options->variants, options->heads, options->head_dims, unusable);
        MQAJIT_CHECK(!targets.empty() || !unusable.empty(), "no variant to build for {} (try --variants all)", arch.name);
        const Compiler& compiler = backend_for(arch).compiler();
        KernelCache cache(DiskCache(settings().cache_dir / "kernels"), 1);
        const unsigned jobs =
            static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(options->jobs, targets.size())));

        // NOTES: with --json the table lines and the ETA go to stderr, so stdout is the JSON alone.
        std::FILE* out = options->json ? stderr : stdout;
        fmt::print(out, "compiling {} kernel(s) for {} with {} {} into {}, {} at a time\n", targets.size(), arch.name,
                   compiler.name(), compiler.version(), (settings().cache_dir / "kernels").string(), jobs);
        const std::string count_column(fmt::formatted_size("[{}/{}] ", targets.size(), targets.size()), ' ');
        if (arch.vendor == Vendor::amd) {
            fmt::print(out, "{}{:<40} {:>3} {:>4} {:>5} {:>5} {:>5} {:>9} {:>7} {:>6} {:>6} {:>9}  {}\n", count_column,
                       "variant", "H", "D", "vgpr", "agpr", "sgpr", "lds B", "scratch", "spillV", "spillS", "ms",
                       "status");
        } else {
            fmt::print(out, "{}{:<40} {:>3} {:>4} {:>5} {:>9} {:>6} {:>6} {:>9}  {}\n", count_column, "variant", "H",
                       "D", "regs", "smem B", "spillS", "spillL", "ms", "status");
        }
        // NOTES: tuned rows that name no buildable variant are reported first, each a failure.
        for (const UnusableRow& row : unusable)
            fmt::print(out, "{}{:<40} {:>3} {:>4}  FAILED: {}\n", count_column, row.variant, row.heads, row.head_dim,
                       row.error);
        std::fflush(out);
        Progress progress(targets.size(), "kernels", out, isatty(fileno(out)) != 0);
        const std::vector<AotOutcome> outcomes = build_kernels(targets, arch, compiler, cache, jobs, progress);

        const std::size_t total = targets.size() + unusable.size();
        const std::size_t failures =
            static_cast<std::size_t>(
                std::count_if(outcomes.begin(), outcomes.end(), [](const AotOutcome& o) { return o.failed; })) +
            unusable.size();
        progress.note(fmt::format(
            "{} of {} kernel(s) ok{}", total - failures, total,
            failures ? "; spills, serialized wgmma, missing compiler reports (NO REPORT: the compiler served the kernel "
                       "from its own cache; run with CUDA_CACHE_DISABLE=1) or compile failures above"
                     : ""));
        if (options->json) {
            nlohmann::json rows = nlohmann::json::array();
            for (const UnusableRow& row : unusable) {
                rows.push_back({{"variant", row.variant}, {"heads", row.heads}, {"head_dim", row.head_dim},
                                {"status", "FAILED"}, {"error", row.error}});
            }
            for (const AotOutcome& o : outcomes) rows.push_back(o.row);
            // NOTES: a path in a row need not be UTF-8; replace, never throw after the work is done.
            fmt::print("{}\n", rows.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
        }
        context.exit_code = failures ? kCheckFailed : kOk;
    });
}

}  // namespace mqajit::cli
