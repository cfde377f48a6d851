#pragma once
// Progress of a long command (aot, tune): each finished step prints one line, "[done/total] what",
// with an ETA from the time per step so far. Off a terminal the ETA ends each line (a log or a
// pipe keeps every line as it comes); on a terminal a bar under the lines shows it, redrawn in place.

#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>

namespace mqajit::tools {

// "42 s", "3 min 05 s", "1 h 02 min".
std::string format_duration(double seconds);

class Progress {
public:
    using Clock = std::function<double()>;  // seconds since any fixed point

    // `unit` names the steps in the bar ("kernels", "candidates").
    Progress(std::size_t total, std::string unit, std::FILE* out, bool terminal, Clock clock = steady_seconds);
    ~Progress();
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    // One more step finished: prints `what` with the count (and off a terminal the ETA).
    void step_done(const std::string& what);
    // A line that is not a step (a shape's result, a skip): printed as it is.
    void note(const std::string& line);
    // Steps that will not run after all: they leave the total.
    void drop(std::size_t steps);

    std::size_t done() const { return done_; }
    std::size_t total() const { return total_; }
    // Seconds left at the rate so far; negative while nothing is done yet.
    double eta_seconds() const;
    // "ETA 3 min 05 s", "ETA unknown" before the first step, "done" after the last.
    std::string eta_text() const;

    static double steady_seconds();

private:
    void clear_bar();
    void draw_bar();

    std::size_t total_;
    std::size_t done_ = 0;
    std::string unit_;
    std::FILE* out_;
    bool terminal_;
    Clock clock_;
    double start_;
    bool bar_shown_ = false;
};

}  // namespace mqajit::tools
