#pragma once
// Whether mqajit found a GPU driver here, in one line, and which tuning table it reads, for
// programs that want to say so.

#include <string>

#include "mqajit/export.hpp"

namespace mqajit {

struct RuntimeStatus {
    bool gpu_available = false;
    std::string message;    // "CUDA driver 13.0, 1 device(s): NVIDIA H200 (sm_90a, 132 SMs)" or why not
    std::string system_db;  // the shipped tuning table in use ("" when none was found: the baseline serves)
};

// Never throws.
MQAJIT_API RuntimeStatus runtime_status();

}  // namespace mqajit
