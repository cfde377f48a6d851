#include "tools/common/tune_watchdog.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>

namespace mqajit::tools {
namespace {

// NOTES: the driver's sticky errors: after one of these the context refuses every call, so the
// candidate that raised it is the one to blame and nothing after it can be measured.
constexpr std::array<std::string_view, 11> kContextFaults = {
    "CUDA_ERROR_LAUNCH_FAILED",    "CUDA_ERROR_ILLEGAL_ADDRESS",      "CUDA_ERROR_MISALIGNED_ADDRESS",
    "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_HARDWARE_STACK_ERROR", "CUDA_ERROR_INVALID_ADDRESS_SPACE",
    "CUDA_ERROR_INVALID_PC",       "CUDA_ERROR_LAUNCH_TIMEOUT",       "CUDA_ERROR_ASSERT",
    "hipErrorIllegalAddress",      "hipErrorLaunchFailure"};

std::string what_to_do(const std::string& candidate) {
    return fmt::format("the process is stopping; finished rows are saved; rerun with --exclude {} to skip it",
                       candidate);
}

}  // namespace

std::string_view to_string(CandidatePhase phase) {
    switch (phase) {
        case CandidatePhase::check: return "check";
        case CandidatePhase::probe: return "probe";
        case CandidatePhase::timing: return "timing";
    }
    return "?";
}

std::string hang_message(const InFlight& in_flight, double limit_s) {
    return fmt::format("candidate {} hung for {:g} s in its {} at {}: {}", in_flight.candidate, limit_s,
                       to_string(in_flight.phase), in_flight.shape, what_to_do(in_flight.candidate));
}

CandidateFault::CandidateFault(const InFlight& in_flight, const Error& cause)
    : Error(ErrorKind::driver, fmt::format("candidate {} faulted in its {} at {} ({}): {}", in_flight.candidate,
                                           to_string(in_flight.phase), in_flight.shape, cause.what(),
                                           what_to_do(in_flight.candidate))) {}

bool is_context_fault(const Error& error) {
    const std::string_view text = error.what();
    return error.kind() == ErrorKind::driver &&
           std::any_of(kContextFaults.begin(), kContextFaults.end(),
                       [&](std::string_view name) { return text.find(name) != std::string_view::npos; });
}

void stop_tuning_process(const std::string& message) {
    const std::string line = "mqajit: " + message + "\n";
    // NOTES: write(2), not stdio: no lock to wait for, and nothing buffered that _exit would drop.
    std::size_t written = 0;
    while (written < line.size()) {
        const ssize_t n = ::write(STDERR_FILENO, line.data() + written, line.size() - written);
        if (n <= 0) break;
        written += static_cast<std::size_t>(n);
    }
    ::_exit(kCandidateStoppedExit);
}

TuneWatchdog::TuneWatchdog(Options options) : options_(std::move(options)) {
    if (options_.limit_s > 0) thread_ = std::thread([this] { watch(); });
}

TuneWatchdog::~TuneWatchdog() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void TuneWatchdog::begin(std::string candidate, std::string shape, CandidatePhase phase) {
    const std::lock_guard lock(mutex_);
    in_flight_ = InFlight{.candidate = std::move(candidate), .shape = std::move(shape), .phase = phase,
                          .since = options_.now()};
}

void TuneWatchdog::end() {
    const std::lock_guard lock(mutex_);
    in_flight_.reset();
}

std::optional<InFlight> TuneWatchdog::in_flight() const {
    const std::lock_guard lock(mutex_);
    return in_flight_;
}

std::optional<std::string> TuneWatchdog::overdue(Clock::time_point now) const {
    const std::lock_guard lock(mutex_);
    return overdue_locked(now);
}

std::optional<std::string> TuneWatchdog::overdue_locked(Clock::time_point now) const {
    if (options_.limit_s <= 0 || !in_flight_) return std::nullopt;
    if (std::chrono::duration<double>(now - in_flight_->since).count() <= options_.limit_s) return std::nullopt;
    return hang_message(*in_flight_, options_.limit_s);
}

void TuneWatchdog::watch() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        wake_.wait_for(lock, options_.poll);
        if (stopping_) return;
        const std::optional<std::string> message = overdue_locked(options_.now());
        if (!message) continue;
        // NOTES: called with the lock held, so the tuner cannot finish the candidate and start
        // writing a row meanwhile: the process ends between rows, never inside one.
        options_.on_hang(*message);
        return;
    }
}

CandidateScope::CandidateScope(TuneWatchdog* watchdog, const std::string& candidate, const std::string& shape,
                               CandidatePhase phase)
    : watchdog_(watchdog),
      in_flight_{.candidate = candidate, .shape = shape, .phase = phase, .since = TuneWatchdog::Clock::now()} {
    if (watchdog_) watchdog_->begin(candidate, shape, phase);
}

CandidateScope::~CandidateScope() {
    if (watchdog_) watchdog_->end();
}

}  // namespace mqajit::tools
