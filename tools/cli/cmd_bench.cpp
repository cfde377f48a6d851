#include "tools/cli/commands.hpp"

namespace mqajit::cli {

void add_bench_command(CLI::App& app, CommandContext& context) {
    (void)app;
    (void)context;
}

}  // namespace mqajit::cli
