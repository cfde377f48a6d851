#include "tools/common/tune_workers_spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/check.hpp"

extern char** environ;

namespace mqajit::tools {
namespace {

std::atomic<bool> g_stop_requested{false};

// Whether an environment entry "NAME=value" sets `name`.
bool sets_variable(std::string_view entry, std::string_view name) {
    return entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=';
}

extern "C" void on_stop_signal(int) { g_stop_requested.store(true); }

// Installs the stop handler for SIGINT and SIGTERM; puts the previous ones back when it goes.
class StopSignals {
public:
    StopSignals() {
        g_stop_requested.store(false);
        struct sigaction action {};
        action.sa_handler = on_stop_signal;
        sigemptyset(&action.sa_mask);
        // NOTES: no SA_RESTART, so poll() returns EINTR at once and the interrupt is passed on.
        sigaction(SIGINT, &action, &previous_int_);
        sigaction(SIGTERM, &action, &previous_term_);
    }
    ~StopSignals() {
        sigaction(SIGINT, &previous_int_, nullptr);
        sigaction(SIGTERM, &previous_term_, nullptr);
    }
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

private:
    struct sigaction previous_int_ {};
    struct sigaction previous_term_ {};
};

struct RunningWorker {
    const WorkerSpec* spec = nullptr;
    pid_t pid = -1;
    int output_fd = -1;     // read end of the worker's stdout+stderr; -1 once it closed
    std::string partial{};    // the unfinished last line read so far
    std::string last_line{}, last_error{};
};

std::vector<std::string> child_environment(const WorkerSpec& spec) {
    std::vector<std::string> entries;
    for (char** entry = environ; *entry != nullptr; ++entry) {
        const std::string_view text(*entry);
        const bool overridden = std::any_of(spec.environment.begin(), spec.environment.end(),
                                            [&](const auto& item) { return sets_variable(text, item.first); });
        if (!overridden) entries.emplace_back(text);
    }
    for (const auto& [name, value] : spec.environment) entries.push_back(name + "=" + value);
    return entries;
}

RunningWorker start(const WorkerSpec& spec) {
    MQAJIT_CHECK_KIND(internal, !spec.argv.empty(), "worker {} has no program to run", spec.label);
    int fds[2];
    MQAJIT_CHECK_KIND(io, ::pipe2(fds, O_CLOEXEC) == 0, "cannot create a pipe for worker {}: {}", spec.label,
                      std::strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    std::vector<char*> argv, envp;
    for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const std::vector<std::string> environment = child_environment(spec);
    for (const std::string& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    pid_t pid = -1;
    const int result = ::posix_spawn(&pid, spec.argv[0].c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (result != 0) {
        ::close(fds[0]);
        MQAJIT_FAIL(io, "cannot start worker {} ({}): {}", spec.label, spec.argv[0], std::strerror(result));
    }
    return RunningWorker{.spec = &spec, .pid = pid, .output_fd = fds[0]};
}

void take_line(RunningWorker& worker, const std::string& line, const WorkerLineSink& show) {
    show(worker.spec->label, line);
    if (line.find_first_not_of(" \r") == std::string::npos) return;
    worker.last_line = line;
    if (line.starts_with("mqajit: ")) worker.last_error = line;
}

// Reads what the worker printed; passes each finished line on. Closes the pipe at end of file.
void drain(RunningWorker& worker, const WorkerLineSink& show) {
    char buffer[4096];
    const ssize_t got = ::read(worker.output_fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) return;
    if (got <= 0) {
        if (!worker.partial.empty()) take_line(worker, worker.partial, show);
        worker.partial.clear();
        ::close(worker.output_fd);
        worker.output_fd = -1;
        return;
    }
    worker.partial.append(buffer, static_cast<std::size_t>(got));
    std::size_t newline;
    while ((newline = worker.partial.find('\n')) != std::string::npos) {
        // NOTES: a worker's progress bar redraws with '\r'; only the last redraw of a line is kept.
        std::string line = worker.partial.substr(0, newline);
        if (const std::size_t cr = line.rfind('\r'); cr != std::string::npos) line.erase(0, cr + 1);
        take_line(worker, line, show);
        worker.partial.erase(0, newline + 1);
    }
}

int wait_for(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
        if (g_stop_requested.load()) ::kill(pid, SIGINT);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

void print_worker_line(const std::string& label, const std::string& line) {
    std::printf("[%s] %s\n", label.c_str(), line.c_str());
    std::fflush(stdout);
}

WorkersResult run_workers(const std::vector<WorkerSpec>& workers, const WorkerLineSink& show) {
    StopSignals signals;
    std::vector<RunningWorker> running;
    running.reserve(workers.size());
    try {
        for (const WorkerSpec& spec : workers) running.push_back(start(spec));
    } catch (const Error&) {
        for (RunningWorker& w : running) {
            ::kill(w.pid, SIGINT);
            ::close(w.output_fd);
            wait_for(w.pid);
        }
        throw;
    }

    bool forwarded = false;
    for (;;) {
        if (g_stop_requested.load() && !forwarded) {
            for (const RunningWorker& w : running) ::kill(w.pid, SIGINT);
            forwarded = true;
        }
        std::vector<pollfd> polled;
        std::vector<RunningWorker*> owners;
        for (RunningWorker& w : running) {
            if (w.output_fd < 0) continue;
            polled.push_back(pollfd{.fd = w.output_fd, .events = POLLIN, .revents = 0});
            owners.push_back(&w);
        }
        if (polled.empty()) break;
        // NOTES: the timeout bounds the wait when a signal lands between the check above and poll().
        const int ready = ::poll(polled.data(), polled.size(), 200);
        if (ready < 0 && errno != EINTR)
            MQAJIT_FAIL(io, "waiting for the tuning workers failed: {}", std::strerror(errno));
        for (std::size_t i = 0; ready > 0 && i < polled.size(); ++i) {
            if (polled[i].revents != 0) drain(*owners[i], show);
        }
    }

    WorkersResult result;
    for (RunningWorker& w : running) {
        result.outcomes.push_back(WorkerOutcome{.label = w.spec->label, .exit_code = wait_for(w.pid),
                                                .last_error = w.last_error.empty() ? w.last_line : w.last_error});
    }
    result.interrupted = g_stop_requested.load();
    return result;
}

void line_buffer_output() {
    std::fflush(stdout);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
}

std::string self_executable() {
    std::error_code error;
    const std::filesystem::path path = std::filesystem::read_symlink("/proc/self/exe", error);
    MQAJIT_CHECK_KIND(io, !error, "cannot find this program's path through /proc/self/exe: {}", error.message());
    return path.string();
}

std::optional<std::string> inherited_environment(const std::string& name) {
    for (char** entry = environ; *entry != nullptr; ++entry) {
        const std::string_view text(*entry);
        if (sets_variable(text, name)) return std::string(text.substr(name.size() + 1));
    }
    return std::nullopt;
}

}  // namespace mqajit::tools
