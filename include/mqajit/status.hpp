#pragma once
// Whether mqajit found a GPU driver here, in one line, for programs that want to say so.

#include <string>

namespace mqajit {

struct RuntimeStatus {
    bool gpu_available = false;
    std::string message;  // "CUDA driver 13.0, 1 device(s): NVIDIA H200 (sm_90a, 132 SMs)" or why not
};

RuntimeStatus runtime_status();

}  // namespace mqajit
