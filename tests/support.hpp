#pragma once
// Shared test helpers: temporary folders, child processes, and skipping a test case.

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace mqajit::testing {

// ctest reports a test that exits with this code as skipped (SKIP_RETURN_CODE in tests/CMakeLists.txt).
inline constexpr int kSkipExitCode = 77;

// Called by main.cpp: notes, and returns, whether this process is ctest's run of one test case
// (--test-case=NAME).
bool note_test_selection(int argc, char** argv);

// Ends the calling test case as skipped, saying why on one line. In ctest's run of one test case
// the process exits with kSkipExitCode, so ctest counts the test as skipped, not passed; in a run
// of many it returns, and MQAJIT_SKIP returns from the test case. Call it before any check.
void skip_test(const std::string& reason);
#define MQAJIT_SKIP(reason)                        \
    do {                                           \
        ::mqajit::testing::skip_test(reason);      \
        return;                                    \
    } while (false)

// A fresh folder under the system temp dir, removed when the object goes away.
class TempDir {
public:
    explicit TempDir(std::string_view tag);
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

// Child processes: the test binary re-executes itself as `mqajit_tests --mqajit-child=NAME args...`.
using ChildMain = std::function<int(const std::vector<std::string>& args)>;
struct ChildRegistration {
    ChildRegistration(std::string name, ChildMain main);
};
#define MQAJIT_TEST_CHILD_CAT2(a, b) a##b
#define MQAJIT_TEST_CHILD_CAT(a, b) MQAJIT_TEST_CHILD_CAT2(a, b)
// MQAJIT_TEST_CHILD("name", [](const std::vector<std::string>& args) { ...; return 0; });
#define MQAJIT_TEST_CHILD(name, fn) \
    static ::mqajit::testing::ChildRegistration MQAJIT_TEST_CHILD_CAT(mqajit_child_, __LINE__)(name, fn)

// Runs `count` copies of child `name` at once (each gets its index as the last argument) and
// returns their exit codes. For a start together, pass a barrier path in args and have children
// wait for it (see tests that do).
std::vector<int> run_children(const std::string& name, const std::vector<std::string>& args, int count);

// Entry point used by main.cpp; returns -1 when argv is not a child invocation.
int run_child_if_requested(int argc, char** argv);

// The path of the mqajit CLI built alongside the tests (from the environment ctest sets).
std::filesystem::path cli_path();
// Runs a command line through /bin/sh, capturing stdout+stderr; returns the exit code.
int run_command(const std::string& command, std::string* output = nullptr);

}  // namespace mqajit::testing
