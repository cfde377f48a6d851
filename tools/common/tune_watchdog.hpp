#pragma once
// The tuner's guard against a candidate that never finishes or that kills the GPU context. A CUDA
// kernel cannot be interrupted, so a thread of the tuning process watches which candidate is in
// flight (shape, name, phase, since when); past the limit it prints one line naming them and ends
// the process with kCandidateStoppedExit. Every finished row is already on disk by then: the CSV,
// the database and the JSON file are written after each shape, before the next one starts.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "mqajit/error.hpp"

namespace mqajit::tools {

// The exit code of a tuning process stopped by a hung or faulted candidate.
inline constexpr int kCandidateStoppedExit = 3;
inline constexpr double kDefaultCandidateTimeoutS = 120;

enum class CandidatePhase { check, probe, timing };
std::string_view to_string(CandidatePhase phase);

struct InFlight {
    std::string candidate;  // "baseline" or a variant name
    std::string shape;      // "H=32 D=128 S=2048 N=8192"
    CandidatePhase phase = CandidatePhase::check;
    std::chrono::steady_clock::time_point since;
};

// "candidate X hung for 120 s in its timing at H=.. S=..: the process is stopping; ..."
std::string hang_message(const InFlight& in_flight, double limit_s);

// A candidate whose run lost the GPU context (a fault: CUDA_ERROR_LAUNCH_FAILED, ILLEGAL_ADDRESS,
// ...). Its message names the candidate, the shape and the phase; nothing more can run in this
// process, so the tuner stops with kCandidateStoppedExit.
class CandidateFault : public Error {
public:
    CandidateFault(const InFlight& in_flight, const Error& cause);
};

// Whether `error` says the GPU context is lost to a kernel fault, so every later call fails too.
bool is_context_fault(const Error& error);

// Writes "mqajit: <message>" to stderr and ends the process at once with kCandidateStoppedExit,
// running no destructor (they would wait on the hung or dead GPU).
[[noreturn]] void stop_tuning_process(const std::string& message);

class TuneWatchdog {
public:
    using Clock = std::chrono::steady_clock;
    struct Options {
        double limit_s = kDefaultCandidateTimeoutS;
        std::chrono::milliseconds poll{500};
        std::function<Clock::time_point()> now = [] { return Clock::now(); };
        std::function<void(const std::string&)> on_hang = stop_tuning_process;  // called once at most
    };

    explicit TuneWatchdog(Options options);
    ~TuneWatchdog();
    TuneWatchdog(const TuneWatchdog&) = delete;
    TuneWatchdog& operator=(const TuneWatchdog&) = delete;

    void begin(std::string candidate, std::string shape, CandidatePhase phase);
    void end();
    // The hang message when the candidate in flight has run past the limit at `now`.
    std::optional<std::string> overdue(Clock::time_point now) const;
    std::optional<InFlight> in_flight() const;

private:
    void watch();
    std::optional<std::string> overdue_locked(Clock::time_point now) const;

    Options options_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::optional<InFlight> in_flight_;
    bool stopping_ = false;
    std::thread thread_;
};

// Marks one phase of a candidate in flight for its scope; with no watchdog it only names the
// candidate to a fault, which it turns into a CandidateFault.
class CandidateScope {
public:
    CandidateScope(TuneWatchdog* watchdog, const std::string& candidate, const std::string& shape, CandidatePhase phase);
    ~CandidateScope();
    CandidateScope(const CandidateScope&) = delete;
    CandidateScope& operator=(const CandidateScope&) = delete;

    // Runs `work` as this candidate's; a context fault comes out as a CandidateFault.
    template <class Work>
    auto run(Work&& work) -> decltype(work()) {
        try {
            return work();
        } catch (const Error& e) {
            if (is_context_fault(e) && dynamic_cast<const CandidateFault*>(&e) == nullptr)
                throw CandidateFault(in_flight_, e);
            throw;
        }
    }

private:
    TuneWatchdog* watchdog_;
    InFlight in_flight_;
};

}  // namespace mqajit::tools
