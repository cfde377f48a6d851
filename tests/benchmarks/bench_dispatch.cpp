// Host cost of one mqa_logits() call on a warm cache (argument checks, tuning lookup, kernel-cache
// hit, launch plan, launch), measured with Google Benchmark on a GPU machine. The target is
// under 5 us per call. Without a GPU the benchmark reports an error and measures nothing.

#include <benchmark/benchmark.h>

#include <memory>

#include "runtime/backend.hpp"
#include "tools/common/device_problem.hpp"

using namespace mqajit;

namespace {

void run_calls(benchmark::State& state, const std::string& variant) {
    Backend& backend = backend_for(Vendor::nvidia);
    if (!backend.driver_status().available) {
        state.SkipWithError("no GPU on this machine");
        return;
    }
    Device& device = *backend.current_device();
    tools::DeviceProblem problem(device, tools::make_problem(64, 1024, 32, 128, tools::MaskKind::causal, 1));
    auto stream = device.create_stream();
    const MqaLogitsOptions options{.stream = stream->handle(), .variant = variant};
    problem.run(options);  // compile and load outside the timed loop
    device.synchronize(stream->handle());
    std::int64_t calls = 0;
    for (auto _ : state) {
        problem.run(options);
        // NOTES: drain the queue now and then so launches never block on a full queue.
        if (++calls % 256 == 0) {
            state.PauseTiming();
            device.synchronize(stream->handle());
            state.ResumeTiming();
        }
    }
    device.synchronize(stream->handle());
    state.SetItemsProcessed(calls);
}

void BM_mqa_logits_call_baseline(benchmark::State& state) { run_calls(state, "baseline"); }
void BM_mqa_logits_call_tuned(benchmark::State& state) { run_calls(state, ""); }
void BM_mqa_logits_call_wgmma(benchmark::State& state) { run_calls(state, "wgmma64x128x32_bkv128_r4_w2_lds4"); }

}  // namespace

BENCHMARK(BM_mqa_logits_call_baseline)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_mqa_logits_call_tuned)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_mqa_logits_call_wgmma)->Unit(benchmark::kMicrosecond);
