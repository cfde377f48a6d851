#pragma once
// Small kernels written inside a CUDA test, compiled with the NVIDIA backend's NVRTC for the
// device's arch and loaded on it.

#include <memory>
#include <string>

#include "runtime/backend.hpp"

namespace mqajit::testing {

inline std::shared_ptr<LoadedKernel> build_test_kernel(Device& gpu, const char* source, const char* kernel) {
    CompileRequest request;
    request.source = source;
    request.source_name = std::string(kernel) + ".cu";
    request.kernel_name = kernel;
    request.arch = gpu.arch();
    const CompileResult compiled = backend_for(Vendor::nvidia).compiler().compile(request);
    return gpu.load(compiled.binary, kernel);
}

}  // namespace mqajit::testing
