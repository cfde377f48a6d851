#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "core/log.hpp"
#include "mqajit/error.hpp"
#include "mqajit/version.hpp"
#include "tools/cli/commands.hpp"
#include "tools/common/tune_workers_spawn.hpp"

int main(int argc, char** argv) {
    using namespace mqajit::cli;
    // NOTES: NVRTC 12.9+ answers a repeated compile from the CUDA compute cache without the ptxas
    // report that `aot` checks for spills and serialized wgmma; mqajit keeps its own kernel cache,
    // so the CLI turns NVRTC's off unless the user chose otherwise.
    setenv("CUDA_CACHE_DISABLE", "1", 0);
    // NOTES: every command's output goes out line by line even into a pipe or a file, so a log, a
    // `| tee` or a parent process sees each line when it is printed, not a block minutes later.
    mqajit::tools::line_buffer_output();
    CLI::App app{"mqajit: JIT kernels for the FP8 MQA-logits operator", "mqajit"};
    app.set_version_flag("--version", mqajit::kVersion);
    app.require_subcommand(1);
    CommandContext context;
    add_variants_command(app, context);
    add_db_command(app, context);
    add_codegen_command(app, context);
    add_aot_command(app, context);
    add_demo_command(app, context);
    add_bench_command(app, context);
    add_tune_command(app, context);
    add_report_command(app, context);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? kOk : kUsage;
    } catch (const mqajit::Error& e) {
        std::fprintf(stderr, "mqajit: %s\n", e.what());
        return e.kind() == mqajit::ErrorKind::invalid_argument ? kUsage : kCheckFailed;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mqajit: %s\n", e.what());
        return kCheckFailed;
    }
    // A command whose output could not be written (a full disk, a closed pipe) failed, whatever it
    // printed: its reader has a truncated answer.
    std::cout.flush();
    if (std::cout.fail() || std::fflush(stdout) != 0 || std::ferror(stdout)) {
        std::fprintf(stderr, "mqajit: cannot write the output: %s\n", std::strerror(errno));
        return kCheckFailed;
    }
    return context.exit_code;
}
