#include "tests/support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <stdexcept>
#include <thread>

namespace mqajit::testing {
namespace {

std::map<std::string, ChildMain>& children() {
    static std::map<std::string, ChildMain> registry;
    return registry;
}

constexpr std::string_view kChildFlag = "--mqajit-child=";

std::filesystem::path self_path() { return std::filesystem::read_symlink("/proc/self/exe"); }

bool g_single_test_case = false;

}  // namespace

bool note_test_selection(int argc, char** argv) {
    constexpr std::string_view kTestCaseFlag = "--test-case=";
    int selections = 0;
    bool pattern = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg(argv[i]);
        if (!arg.starts_with(kTestCaseFlag)) continue;
        ++selections;
        pattern = pattern || arg.find('*') != std::string_view::npos || arg.find('?') != std::string_view::npos;
    }
    // NOTES: doctest_discover_tests runs each test case as `mqajit_tests --test-case=<its name>`.
    g_single_test_case = selections == 1 && !pattern;
    return g_single_test_case;
}

void skip_test(const std::string& reason) {
    std::printf("skipped: %s\n", reason.c_str());
    std::fflush(stdout);
    if (g_single_test_case) std::exit(kSkipExitCode);
}

TempDir::TempDir(std::string_view tag) {
    std::random_device entropy;
    path_ = std::filesystem::temp_directory_path() /
            ("mqajit-test-" + std::string(tag) + "-" + std::to_string(getpid()) + "-" + std::to_string(entropy()));
    std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

ChildRegistration::ChildRegistration(std::string name, ChildMain main) {
    children().emplace(std::move(name), std::move(main));
}

int run_child_if_requested(int argc, char** argv) {
    if (argc < 2 || std::string_view(argv[1]).substr(0, kChildFlag.size()) != kChildFlag) return -1;
    const std::string name(std::string_view(argv[1]).substr(kChildFlag.size()));
    auto found = children().find(name);
    if (found == children().end()) {
        std::fprintf(stderr, "no test child named '%s'\n", name.c_str());
        return 3;
    }
    std::vector<std::string> args(argv + 2, argv + argc);
    try {
        return found->second(args);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "child '%s' threw: %s\n", name.c_str(), e.what());
        return 4;
    }
}

std::vector<int> run_children(const std::string& name, const std::vector<std::string>& args, int count) {
    const std::string exe = self_path().string();
    std::vector<pid_t> pids;
    for (int index = 0; index < count; ++index) {
        std::vector<std::string> argv_strings = {exe, std::string(kChildFlag) + name};
        argv_strings.insert(argv_strings.end(), args.begin(), args.end());
        argv_strings.push_back(std::to_string(index));
        pid_t pid = fork();
        if (pid < 0) throw std::runtime_error("fork failed");
        if (pid == 0) {
            std::vector<char*> argv;
            for (auto& s : argv_strings) argv.push_back(s.data());
            argv.push_back(nullptr);
            execv(exe.c_str(), argv.data());
            _exit(127);
        }
        pids.push_back(pid);
    }
    std::vector<int> codes;
    for (pid_t pid : pids) {
        int status = 0;
        waitpid(pid, &status, 0);
        codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    }
    return codes;
}

std::filesystem::path cli_path() {
    if (const char* path = std::getenv("MQAJIT_MQAJIT_EXE")) return path;
    return std::filesystem::path(MQAJIT_BINARY_DIR) / "tools" / "mqajit";
}

int run_command(const std::string& command, std::string* output) {
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) return -1;
    std::array<char, 4096> buffer{};
    std::string text;
    while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) text.append(buffer.data(), n);
    int status = pclose(pipe);
    if (output) *output = std::move(text);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace mqajit::testing
