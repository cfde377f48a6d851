#pragma once
// Each subcommand file registers itself on the root CLI::App. Exit codes: 0 success,
// 1 a check failed, 2 bad usage (CLI11 parse errors and mqajit invalid_argument errors).

#include <CLI/CLI.hpp>

#include <string>

namespace mqajit::cli {

enum ExitCode : int { kOk = 0, kCheckFailed = 1, kUsage = 2 };

// --op for the commands that serve both operators: mqa_logits (prefill, the default) or
// paged_mqa_logits (decode); with_topk adds mqa_topk (its fused kernels).
inline CLI::Option* add_op_option(CLI::App& command, std::string& op, bool with_topk = false) {
    if (with_topk) {
        return command
            .add_option("--op", op,
                        "Operator: mqa_logits (prefill, the default), paged_mqa_logits (decode) or mqa_topk (fused top-k)")
            ->check(CLI::IsMember({"mqa_logits", "paged_mqa_logits", "mqa_topk"}));
    }
    return command.add_option("--op", op, "Operator: mqa_logits (prefill, the default) or paged_mqa_logits (decode)")
        ->check(CLI::IsMember({"mqa_logits", "paged_mqa_logits"}));
}

// Set by a subcommand's callback; main() returns it.
struct CommandContext {
    int exit_code = kOk;
};

void add_variants_command(CLI::App& app, CommandContext& context);   // cmd_variants.cpp
void add_db_command(CLI::App& app, CommandContext& context);         // cmd_db.cpp
void add_codegen_command(CLI::App& app, CommandContext& context);    // cmd_codegen.cpp
void add_aot_command(CLI::App& app, CommandContext& context);        // cmd_aot.cpp
void add_demo_command(CLI::App& app, CommandContext& context);       // cmd_demo.cpp
void add_bench_command(CLI::App& app, CommandContext& context);      // cmd_bench.cpp
void add_tune_command(CLI::App& app, CommandContext& context);       // cmd_tune.cpp
void add_report_command(CLI::App& app, CommandContext& context);     // cmd_report.cpp

}  // namespace mqajit::cli
