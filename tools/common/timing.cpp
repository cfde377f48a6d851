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

Timing DeviceTimer::time(const Launch& launch, const TimingOptions& options) {
    return time_interleaved({launch}, options).front();
}

std::vector<Timing> DeviceTimer::time_interleaved(const std::vector<Launch>& launches, const TimingOptions& options) {
    void* stream = stream_->handle();
    for (const Launch& launch : launches)
        for (int i = 0; i < options.warmup_runs; ++i) launch(stream);
    device_.synchronize(stream);
    const std::size_t count = launches.size();
    std::vector<std::vector<double>> samples(count);
    for (int run = 0; run < options.timed_runs; ++run) {
        for (std::size_t turn = 0; turn < count; ++turn) {
            const std::size_t k = (turn + static_cast<std::size_t>(run)) % count;
            if (options.flush_l2)
                device_.fill_bytes(flush_buffer_->data(), static_cast<std::uint8_t>(run), kFlushBytes, stream);
            events_->record_start(stream);
            launches[k](stream);
            events_->record_stop(stream);
            samples[k].push_back(events_->elapsed_ms() * 1000.0);
        }
    }
    std::vector<Timing> timings(count);
    for (std::size_t k = 0; k < count && options.timed_runs > 0; ++k) {
        timings[k].runs = options.timed_runs;
        timings[k].median_us = median(samples[k]);
        timings[k].min_us = *std::min_element(samples[k].begin(), samples[k].end());
        timings[k].max_us = *std::max_element(samples[k].begin(), samples[k].end());
    }
    return timings;
}

}  // namespace mqajit::tools
