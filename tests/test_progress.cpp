// Progress lines of aot and tune without a GPU: the count and ETA off a terminal (one line per
// step, as a pipe or a log gets them), the bar redrawn under the lines on a terminal, dropped steps,
// and the ETA at the rate so far (an injected clock).

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tools/common/progress.hpp"

using mqajit::tools::format_duration;
using mqajit::tools::Progress;

namespace {

// A FILE* whose text can be read back.
class CapturedOutput {
public:
    CapturedOutput() : file_(open_memstream(&buffer_, &size_)) { REQUIRE(file_ != nullptr); }
    ~CapturedOutput() {
        std::fclose(file_);
        std::free(buffer_);
    }
    CapturedOutput(const CapturedOutput&) = delete;
    CapturedOutput& operator=(const CapturedOutput&) = delete;
    std::FILE* file() { return file_; }
    std::string text() {
        std::fflush(file_);
        return std::string(buffer_, size_);
    }

private:
    char* buffer_ = nullptr;
    std::size_t size_ = 0;
    std::FILE* file_;
};

}  // namespace

TEST_CASE("progress: durations read as seconds, minutes or hours") {
    CHECK(format_duration(0) == "0 s");
    CHECK(format_duration(42.4) == "42 s");
    CHECK(format_duration(59.6) == "1 min 00 s");
    CHECK(format_duration(185) == "3 min 05 s");
    CHECK(format_duration(3725) == "1 h 02 min");
    CHECK(format_duration(-5) == "0 s");
}

TEST_CASE("progress: off a terminal every step is one line with its count and the ETA at the rate so far") {
    double now = 100.0;
    CapturedOutput out;
    Progress progress(4, "kernels", out.file(), false, [&] { return now; });
    CHECK(progress.eta_text() == "ETA unknown");
    now = 110.0;
    progress.step_done("first");   // 10 s per step, 3 left
    now = 120.0;
    progress.step_done("second");  // 10 s per step, 2 left
    progress.note("a note");
    now = 160.0;
    progress.step_done("third");   // 20 s per step, 1 left
    CHECK(progress.eta_seconds() == doctest::Approx(20.0));
    now = 170.0;
    progress.step_done("fourth");
    CHECK(progress.eta_text() == "done");
    CHECK(out.text() ==
          "[1/4] first (ETA 30 s)\n"
          "[2/4] second (ETA 20 s)\n"
          "a note\n"
          "[3/4] third (ETA 20 s)\n"
          "[4/4] fourth (done)\n");
}

TEST_CASE("progress: counts are padded to the total's width, so columns after them line up") {
    CapturedOutput out;
    Progress progress(12, "kernels", out.file(), false, [] { return 0.0; });
    progress.step_done("a");
    CHECK(out.text() == "[ 1/12] a (ETA 0 s)\n");
}

TEST_CASE("progress: dropped steps leave the total and shorten the ETA") {
    double now = 0.0;
    CapturedOutput out;
    Progress progress(10, "candidates", out.file(), false, [&] { return now; });
    now = 5.0;
    progress.step_done("one");
    CHECK(progress.eta_seconds() == doctest::Approx(45.0));
    progress.drop(5);
    CHECK(progress.total() == 5);
    CHECK(progress.eta_seconds() == doctest::Approx(20.0));
    progress.drop(100);  // never below what is done
    CHECK(progress.total() == 1);
    CHECK(progress.eta_text() == "done");
}

TEST_CASE("progress: on a terminal the lines stay and a bar with the ETA is redrawn under them") {
    double now = 0.0;
    CapturedOutput out;
    {
        Progress progress(2, "kernels", out.file(), true, [&] { return now; });
        now = 3.0;
        progress.step_done("first");
        progress.note("note");
        now = 6.0;
        progress.step_done("second");
    }
    const std::string bar = "\r[###############               ] 1/2 kernels, ETA 3 s\x1b[K";
    CHECK(out.text() == "[1/2] first\n" + bar + "\r\x1b[K" + "note\n" + bar + "\r\x1b[K" + "[2/2] second\n");
}

TEST_CASE("progress: a bar left unfinished (an interrupted run) ends its line") {
    CapturedOutput out;
    {
        Progress progress(3, "candidates", out.file(), true, [] { return 0.0; });
        progress.step_done("only one");
    }
    const std::string text = out.text();
    REQUIRE(!text.empty());
    CHECK(text.back() == '\n');
}
