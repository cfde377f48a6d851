#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>

#include "tests/support.hpp"

int main(int argc, char** argv) {
    setenv("CUDA_CACHE_DISABLE", "1", 0);  // the codegen tests read ptxas reports (tools/cli/main.cpp says why)
    if (int code = mqajit::testing::run_child_if_requested(argc, argv); code >= 0) return code;
    doctest::Context context(argc, argv);
    return context.run();
}

// NOTES: ctest's doctest discovery splits a test name at each ';' into names that match no test
// case, and a run that matches none passes while checking nothing.
TEST_CASE("test suite: no test case name holds a semicolon, so ctest runs every one") {
    for (const auto& test : doctest::detail::getRegisteredTests()) {
        CAPTURE(test.m_name);
        CHECK(std::strchr(test.m_name, ';') == nullptr);
    }
}
