#include "tools/common/progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace mqajit::tools {

std::string format_duration(double seconds) {
    const long total = std::lround(std::max(0.0, seconds));
    if (total < 60) return fmt::format("{} s", total);
    if (total < 3600) return fmt::format("{} min {:02} s", total / 60, total % 60);
    return fmt::format("{} h {:02} min", total / 3600, total % 3600 / 60);
}

double Progress::steady_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Progress::Progress(std::size_t total, std::string unit, std::FILE* out, bool terminal, Clock clock)
    : total_(total), unit_(std::move(unit)), out_(out), terminal_(terminal), clock_(std::move(clock)),
      start_(clock_()) {}

Progress::~Progress() {
    if (bar_shown_) fmt::print(out_, "\n");
}

double Progress::eta_seconds() const {
    if (done_ == 0) return -1.0;
    const double per_step = (clock_() - start_) / static_cast<double>(done_);
    return per_step * static_cast<double>(total_ - done_);
}

std::string Progress::eta_text() const {
    if (done_ == total_) return "done";
    if (done_ == 0) return "ETA unknown";
    return "ETA " + format_duration(eta_seconds());
}

void Progress::drop(std::size_t steps) {
    total_ -= std::min(steps, total_ - done_);
    if (terminal_ && bar_shown_) draw_bar();
}

void Progress::step_done(const std::string& what) {
    ++done_;
    total_ = std::max(total_, done_);
    const std::string count =
        fmt::format("[{:>{}}/{}]", done_, fmt::formatted_size("{}", total_), total_);
    if (terminal_) {
        clear_bar();
        fmt::print(out_, "{} {}\n", count, what);
        draw_bar();
    } else {
        fmt::print(out_, "{} {} ({})\n", count, what, eta_text());
    }
    std::fflush(out_);
}

void Progress::note(const std::string& line) {
    clear_bar();
    fmt::print(out_, "{}\n", line);
    if (terminal_) draw_bar();
    std::fflush(out_);
}

void Progress::clear_bar() {
    if (bar_shown_) fmt::print(out_, "\r\x1b[K");
    bar_shown_ = false;
}

void Progress::draw_bar() {
    if (done_ == total_) return;  // NOTES: every step's line is printed; a full bar adds nothing
    constexpr std::size_t kWidth = 30;
    const std::size_t filled = total_ ? kWidth * done_ / total_ : kWidth;
    fmt::print(out_, "\r[{:<{}}] {}/{} {}, {}\x1b[K", std::string(filled, '#'), kWidth, done_, total_, unit_,
               eta_text());
    bar_shown_ = true;
}

}  // namespace mqajit::tools
