#pragma once
// Device timing as the project reports it: warm-up, L2 flushed before every run, CUDA events
// around the kernel only, median of many runs.

#include <functional>
#include <memory>
#include <vector>

#include "runtime/device.hpp"

namespace mqajit::tools {

struct TimingOptions {
    int warmup_runs = 5;
    int timed_runs = 50;
    bool flush_l2 = true;
};

struct Timing {
    double median_us = 0;
    double min_us = 0;
    double max_us = 0;
    int runs = 0;
};

class DeviceTimer {
public:
    explicit DeviceTimer(Device& device);
    using Launch = std::function<void(void* stream)>;
    // `launch(stream)` enqueues the work to time on `stream`.
    Timing time(const Launch& launch, const TimingOptions& options);
    // Times several launches run by run in turn (each run's order rotated), so that a drift of
    // the clocks during the measurement (a GPU heating up) falls on all of them alike.
    std::vector<Timing> time_interleaved(const std::vector<Launch>& launches, const TimingOptions& options);

private:
    Device& device_;
    std::unique_ptr<DeviceStream> stream_;
    std::unique_ptr<EventTimer> events_;
    std::unique_ptr<DeviceBuffer> flush_buffer_;  // larger than L2: writing it evicts the inputs
};

double median(std::vector<double> values);

}  // namespace mqajit::tools
