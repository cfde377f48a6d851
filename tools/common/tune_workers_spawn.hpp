#pragma once
// Worker processes for `mqajit tune --devices`: start them all at once, show their output line
// by line prefixed with the worker's label, pass an interrupt on to them, and wait for every one.

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mqajit::tools {

struct WorkerSpec {
    std::string label;              // "GPU 1": prefixes the worker's lines and its outcome
    std::vector<std::string> argv;  // argv[0] is the program's path
    std::vector<std::pair<std::string, std::string>> environment{};  // set over this process's own
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

// Shows one line a worker printed, as it arrives.
using WorkerLineSink = std::function<void(const std::string& label, const std::string& line)>;
// Prints "[label] line" to stdout and flushes.
void print_worker_line(const std::string& label, const std::string& line);

// Runs every worker to its end, each line it prints going to `show` as soon as it is read. While they run, SIGINT and SIGTERM to this process are caught and
// sent on to each worker as SIGINT (the tuner's "finish the row, then stop"); the previous
// handlers are restored afterwards. Throws Error(io) when a worker cannot be started (the ones
// already started are interrupted and waited for first).
WorkersResult run_workers(const std::vector<WorkerSpec>& workers, const WorkerLineSink& show = print_worker_line);

// Makes this process's stdout line-buffered (stderr has no buffer), so a parent reading it through
// a pipe gets every line as it is printed, up to the last one before a hang.
void line_buffer_output();

// This executable's path (/proc/self/exe), to start workers of the same build.
std::string self_executable();

// The value of `name` in the environment this process inherited, if set.
std::optional<std::string> inherited_environment(const std::string& name);

}  // namespace mqajit::tools
