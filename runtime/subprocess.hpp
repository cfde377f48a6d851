#pragma once
// Runs an external program (the offline clang for AMD code objects) and captures what it prints.

#include <string>
#include <vector>

namespace mqajit {

struct ProcessResult {
    int exit_code = -1;   // the program's exit status; 128 + N when killed by signal N
    std::string output;   // stdout and stderr together, in the order written
};

// Runs argv[0] (a path, or a name looked up on PATH) with argv; throws Error(not_found) if it
// cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv);

}  // namespace mqajit
