#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

#include "tests/support.hpp"

int main(int argc, char** argv) {
    setenv("CUDA_CACHE_DISABLE", "1", 0);  // the codegen tests read ptxas reports (tools/cli/main.cpp says why)
    if (int code = mqajit::testing::run_child_if_requested(argc, argv); code >= 0) return code;
    doctest::Context context(argc, argv);
    return context.run();
}
