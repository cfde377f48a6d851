#include "tools/common/timing.hpp"

#include <algorithm>

namespace mqajit::tools {
namespace {

// NOTES: 256 MiB is over four times the H200's 60 MB L2 (and over any current GPU's).
constexpr std::size_t kFlushBytes = std::size_t{256} << 20;

}  // namespace

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const std::size_t mid = values.size() / 2;
    return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

DeviceTimer::DeviceTimer(Device& device)
    : device_(device),
      stream_(device.create_stream()),
      events_(device.create_timer()),
      flush_buffer_(device.allocate(kFlushBytes)) {}

Timing DeviceTimer::time(const std::function<void(void* stream)>& launch, const TimingOptions& options) {
    void* stream = stream_->handle();
    for (int i = 0; i < options.warmup_runs; ++i) launch(stream);
    device_.synchronize(stream);
    std::vector<double> samples;
    samples.reserve(options.timed_runs);
    for (int i = 0; i < options.timed_runs; ++i) {
        if (options.flush_l2) device_.fill_bytes(flush_buffer_->data(), static_cast<std::uint8_t>(i), kFlushBytes, stream);
        events_->record_start(stream);
        launch(stream);
        events_->record_stop(stream);
        samples.push_back(events_->elapsed_ms() * 1000.0);
    }
    Timing timing;
    timing.runs = options.timed_runs;
    timing.median_us = median(samples);
    timing.min_us = *std::min_element(samples.begin(), samples.end());
    timing.max_us = *std::max_element(samples.begin(), samples.end());
    return timing;
}

}  // namespace mqajit::tools
