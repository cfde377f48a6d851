#pragma once
// Worker processes for `mqajit tune --devices`: start them all at once, show their output line
// by line prefixed with the worker's label, pass an interrupt on to them, and wait for every one.

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mqajit::tools {

struct WorkerSpec {
    std::string label;              // "GPU 1": prefixes the worker's lines and its outcome
    std::vector<std::string> argv;  // argv[0] is the program's path
    std::vector<std::pair<std::string, std::string>> environment;  // set over this process's own
};

struct WorkerOutcome {
    std::string label;
    int exit_code = -1;       // 128 + N when killed by signal N
    std::string last_error;   // the last line it printed starting "mqajit: ", else its last line
};

struct WorkersResult {
    std::vector<WorkerOutcome> outcomes;  // in the order of the specs
    bool interrupted = false;             // SIGINT or SIGTERM reached this process meanwhile
};

// Runs every worker to its end. While they run, SIGINT and SIGTERM to this process are caught and
// sent on to each worker as SIGINT (the tuner's "finish the row, then stop"); the previous
// handlers are restored afterwards. Throws Error(io) when a worker cannot be started (the ones
// already started are interrupted and waited for first).
WorkersResult run_workers(const std::vector<WorkerSpec>& workers);

// This executable's path (/proc/self/exe), to start workers of the same build.
std::string self_executable();

// The value of `name` in the environment this process inherited, if set.
std::optional<std::string> inherited_environment(const std::string& name);

}  // namespace mqajit::tools
