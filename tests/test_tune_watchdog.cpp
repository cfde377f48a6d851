// The tuner's watchdog without a GPU: when a candidate in flight counts as hung (an injected
// clock), the one line it prints, the thread that fires once, the process it ends with exit 3 (a
// child process), and how a context fault becomes an error naming the candidate and the shape.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <thread>

#include "tests/support.hpp"
#include "tools/common/tune_watchdog.hpp"
#include "tools/common/tune_workers_spawn.hpp"

using namespace mqajit;
using namespace std::chrono_literals;

namespace {

constexpr const char* kVariant = "wgmma64x128x32_bkv128_r4_w8_lds3";
constexpr const char* kShape = "H=32 D=128 S=2048 N=8192";

// NOTES: the child's "candidate" never finishes, as a hung kernel would not; the watchdog must end it.
MQAJIT_TEST_CHILD("tune-watchdog-hang", [](const std::vector<std::string>&) {
    tools::TuneWatchdog watchdog({.limit_s = 0.2, .poll = 20ms});
    watchdog.begin(kVariant, kShape, tools::CandidatePhase::probe);
    std::this_thread::sleep_for(30s);
    std::puts("the watchdog never fired");
    return 0;
});

}  // namespace

TEST_CASE("tune watchdog: a candidate is overdue only past the limit, with one line naming it") {
    auto now = std::chrono::steady_clock::time_point{} + 1000s;
    tools::TuneWatchdog watchdog({.limit_s = 120, .now = [&] { return now; }});
    CHECK(!watchdog.overdue(now + 1000s));  // nothing in flight
    watchdog.begin(kVariant, kShape, tools::CandidatePhase::timing);
    REQUIRE(watchdog.in_flight());
    CHECK(watchdog.in_flight()->candidate == kVariant);
    CHECK(!watchdog.overdue(now + 119s));
    CHECK(!watchdog.overdue(now + 120s));
    const auto message = watchdog.overdue(now + 121s);
    REQUIRE(message);
    CHECK(*message == fmt::format("candidate {0} hung for 120 s in its timing at {1}: the process is stopping; "
                                  "finished rows are saved; rerun with --exclude {0} to skip it",
                                  kVariant, kShape));
    watchdog.end();
    CHECK(!watchdog.in_flight());
    CHECK(!watchdog.overdue(now + 1000s));

    // A new phase restarts the count.
    watchdog.begin("baseline", kShape, tools::CandidatePhase::check);
    now += 100s;
    watchdog.begin("baseline", kShape, tools::CandidatePhase::probe);
    CHECK(!watchdog.overdue(now + 119s));
    CHECK(watchdog.overdue(now + 121s)->find("baseline hung for 120 s in its probe") != std::string::npos);

    tools::TuneWatchdog off({.limit_s = 0, .now = [&] { return now; }});
    off.begin(kVariant, kShape, tools::CandidatePhase::check);
    CHECK(!off.overdue(now + 1000000s));
}

TEST_CASE("tune watchdog: its thread reports a hung candidate once, and never one that finished") {
    std::promise<std::string> hung;
    int calls = 0;
    {
        tools::TuneWatchdog watchdog({.limit_s = 0.05, .poll = 5ms, .on_hang = [&](const std::string& message) {
                                          ++calls;
                                          hung.set_value(message);
                                      }});
        watchdog.begin(kVariant, kShape, tools::CandidatePhase::check);
        auto future = hung.get_future();
        REQUIRE(future.wait_for(20s) == std::future_status::ready);
        CHECK(future.get().find(fmt::format("candidate {} hung for 0.05 s in its check at {}", kVariant, kShape)) !=
              std::string::npos);
        std::this_thread::sleep_for(100ms);
    }
    CHECK(calls == 1);

    bool fired = false;
    {
        tools::TuneWatchdog watchdog({.limit_s = 0.3, .poll = 5ms, .on_hang = [&](const std::string&) { fired = true; }});
        for (int i = 0; i < 5; ++i) {
            tools::CandidateScope scope(&watchdog, kVariant, kShape, tools::CandidatePhase::timing);
            std::this_thread::sleep_for(100ms);  // 0.5 s in all, each phase under the limit
        }
        CHECK(!watchdog.in_flight());
        std::this_thread::sleep_for(400ms);
    }
    CHECK(!fired);
}

TEST_CASE("tune watchdog: a hung candidate ends the process with exit 3 and one line") {
    std::string output;
    const int code = testing::run_command(tools::self_executable() + " --mqajit-child=tune-watchdog-hang", &output);
    CAPTURE(output);
    CHECK(code == tools::kCandidateStoppedExit);
    CHECK(output.find(fmt::format("mqajit: candidate {0} hung for 0.2 s in its probe at {1}: the process is "
                                  "stopping; finished rows are saved; rerun with --exclude {0} to skip it\n",
                                  kVariant, kShape)) != std::string::npos);
    CHECK(output.find("never fired") == std::string::npos);
}

TEST_CASE("tune watchdog: a context fault names the candidate, its phase and the shape, other errors pass") {
    const Error fault(ErrorKind::driver,
                      "cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was "
                      "encountered); a kernel faulted");
    CHECK(tools::is_context_fault(fault));
    CHECK(tools::is_context_fault(Error(ErrorKind::driver, "cuMemcpyDtoH failed: CUDA_ERROR_LAUNCH_FAILED")));
    CHECK(!tools::is_context_fault(Error(ErrorKind::driver, "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY")));
    CHECK(!tools::is_context_fault(Error(ErrorKind::invalid_argument, "variant CUDA_ERROR_LAUNCH_FAILED")));

    tools::TuneWatchdog watchdog({.limit_s = 1000});
    tools::CandidateScope scope(&watchdog, kVariant, kShape, tools::CandidatePhase::probe);
    CHECK(scope.run([] { return 7; }) == 7);
    try {
        scope.run([&]() -> int { throw fault; });
        FAIL("the fault did not come out");
    } catch (const tools::CandidateFault& e) {
        const std::string what = e.what();
        CHECK(e.kind() == ErrorKind::driver);
        CHECK(what.starts_with(fmt::format("candidate {} faulted in its probe at {} (", kVariant, kShape)));
        CHECK(what.find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos);
        CHECK(what.ends_with(fmt::format("rerun with --exclude {} to skip it", kVariant)));
    }
    const Error other(ErrorKind::compile_failed, "nvrtc said no");
    try {
        scope.run([&]() -> int { throw other; });
        FAIL("the error did not come out");
    } catch (const tools::CandidateFault&) {
        FAIL("a compile error is not a fault");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == "nvrtc said no");
    }
    REQUIRE(watchdog.in_flight());
    CHECK(watchdog.in_flight()->phase == tools::CandidatePhase::probe);
}
