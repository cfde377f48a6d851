#include "runtime/subprocess.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/check.hpp"

extern char** environ;

namespace mqajit {
namespace {

struct FileDescriptor {
    int fd = -1;
    ~FileDescriptor() { reset(); }
    void reset() {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
};

struct SpawnActions {
    posix_spawn_file_actions_t actions;
    SpawnActions() { posix_spawn_file_actions_init(&actions); }
    ~SpawnActions() { posix_spawn_file_actions_destroy(&actions); }
};

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv) {
    MQAJIT_CHECK_KIND(internal, !argv.empty(), "run_process needs a program to run");
    int pipe_fds[2];
    // NOTES: O_CLOEXEC keeps this pipe out of programs that other threads start at the same time;
    // dup2 below clears it on the child's stdout/stderr only.
    MQAJIT_CHECK_KIND(io, ::pipe2(pipe_fds, O_CLOEXEC) == 0, "cannot create a pipe to run {}: {}", argv[0],
                      std::strerror(errno));
    FileDescriptor read_end{pipe_fds[0]};
    FileDescriptor write_end{pipe_fds[1]};

    SpawnActions spawn;
    posix_spawn_file_actions_adddup2(&spawn.actions, write_end.fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&spawn.actions, write_end.fd, STDERR_FILENO);
    std::vector<char*> arguments;
    for (const std::string& argument : argv) arguments.push_back(const_cast<char*>(argument.c_str()));
    arguments.push_back(nullptr);

    pid_t pid = 0;
    const int spawned = ::posix_spawnp(&pid, argv[0].c_str(), &spawn.actions, nullptr, arguments.data(), environ);
    MQAJIT_CHECK_KIND(not_found, spawned == 0, "cannot run {}: {}; check that it is installed", argv[0],
                      std::strerror(spawned));
    write_end.reset();

    ProcessResult result;
    char buffer[65536];
    for (;;) {
        const ssize_t got = ::read(read_end.fd, buffer, sizeof(buffer));
        if (got > 0) {
            result.output.append(buffer, static_cast<std::size_t>(got));
        } else if (got == 0 || errno != EINTR) {
            break;
        }
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

}  // namespace mqajit
