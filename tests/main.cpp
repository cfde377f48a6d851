#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "tests/support.hpp"

int main(int argc, char** argv) {
    if (int code = mqajit::testing::run_child_if_requested(argc, argv); code >= 0) return code;
    doctest::Context context(argc, argv);
    return context.run();
}
