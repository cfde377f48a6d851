// How long NVRTC takes to compile each registered sm_90a wgmma variant (no GPU needed), at H=32
// and H=64, D=128: the cost of a cold JIT call. The goal is under 1 s per variant; on the 2-core CI
// machine it was 0.2-0.6 s when idle. A timing, so a benchmark and not a unit test (a loaded
// machine would fail any fixed bound).

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "codegen/variant_registry.hpp"
#include "mqajit/error.hpp"
#include "runtime/backend.hpp"
#include "runtime/compiler.hpp"
#include "runtime/kernel_request.hpp"

namespace {

using mqajit::Arch;
using mqajit::Variant;

// NOTES: NVRTC 12.9+ would answer a repeated compile from the CUDA compute cache, timing a lookup.
const bool kComputeCacheOff = [] { return setenv("CUDA_CACHE_DISABLE", "1", 0) == 0; }();

void compile_variant(benchmark::State& state, const Variant& variant, int heads) {
    const Arch arch = Arch::parse("sm_90a");
    const mqajit::Backend* backend = nullptr;
    try {
        backend = &mqajit::backend_for(arch);
    } catch (const mqajit::Error& e) {
        state.SkipWithError(e.what());  // a build without the NVIDIA backend
        return;
    }
    const mqajit::Compiler& compiler = backend->compiler();
    const mqajit::CompileRequest request = mqajit::compile_request_for(variant, heads, 128, arch);
    for (auto _ : state) {
        const mqajit::CompileResult result = compiler.compile(request);
        benchmark::DoNotOptimize(result.binary.data());
        state.counters["registers"] = result.usage.registers;
    }
}

const bool kRegistered = [] {
    const Arch arch = Arch::parse("sm_90a");
    for (int heads : {32, 64}) {
        for (const Variant& v : mqajit::VariantRegistry::instance().variants(arch, heads, 128)) {
            if (v.op != mqajit::MatrixOp::wgmma) continue;
            benchmark::RegisterBenchmark(("nvrtc_compile/" + v.name() + "_h" + std::to_string(heads)).c_str(),
                                         [v, heads](benchmark::State& state) { compile_variant(state, v, heads); })
                ->Unit(benchmark::kMillisecond)
                ->Iterations(3)
                ->UseRealTime();
        }
    }
    return kComputeCacheOff;
}();

}  // namespace
