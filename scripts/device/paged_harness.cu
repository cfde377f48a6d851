// A stand-alone check and timing of the sm90 paged_mqa_logits kernel template against its reference
// kernel, before the family is wired into the library (device machine: nvcc, -lcuda). Every case:
// fresh random data, a shuffled block table with shared blocks, NaN-poisoned logits, the reference
// on the same inputs, exact -inf where clean, calc_diff on what a token sees, a bitwise rerun, and a
// CUDA-graph replay with new context lengths. Then CUDA-event timings (L2 flushed, median).
// Build (repo root): nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -Icodegen/templates
//   -Icodegen/families/sm90_mqa_logits -Icodegen/families/sm90_paged_mqa_logits scripts/device/paged_harness.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "paged_problem.cuh"
#include "reference_paged_mqa_logits.cuh"
#include "sm90_paged_mqa_logits.cuh"

MQA_REFERENCE_PAGED_MQA_LOGITS_KERNEL(paged_mqa_logits_reference)

// (heads, next_n, math warpgroups, stages, CTAs per SM); the first of each (heads, next_n) serves checks.
#define INSTANCES(X)                                                                                          \
    X(32, 1, 2, 16, 1) X(32, 2, 2, 16, 1) X(32, 3, 2, 8, 1) X(32, 4, 2, 8, 1) X(64, 1, 2, 16, 1)              \
    X(64, 2, 2, 16, 1) X(64, 3, 2, 8, 1) X(64, 4, 2, 8, 1) X(64, 1, 2, 8, 1) X(64, 1, 1, 16, 1)               \
    X(64, 1, 2, 8, 2) X(64, 1, 1, 8, 2) X(64, 1, 3, 15, 1) X(64, 2, 2, 8, 1)                \
    X(64, 4, 2, 4, 1) X(64, 4, 1, 8, 1) X(32, 1, 2, 8, 2) X(32, 4, 2, 4, 1)
#define DEFINE(h, n, w, s, b) \
    MQA_SM90_PAGED_KERNEL(paged_h##h##_n##n##_w##w##_s##s##_b##b, h, 128, 64, n, w, s, b)
INSTANCES(DEFINE)

struct Kernel {
    int heads, next_n, warps, stages, blocks_per_sm;
    void (*fn)(PagedMqaLogitsParams);
    unsigned shared;
};
#define ENTRY(h, n, w, s, b)                                   \
    {h, n, w, s, b, paged_h##h##_n##n##_w##w##_s##s##_b##b, \
     mqa_sm90_paged::PagedConfig<h, 128, 64, n, w, s, b>::kSharedBytes},
static const Kernel kKernels[] = {INSTANCES(ENTRY)};

static const Kernel& kernel_for(const Case& c) {
    for (const Kernel& k : kKernels)
        if (k.heads == c.heads && k.next_n == c.next_n && k.warps == c.warps) return k;
    for (const Kernel& k : kKernels)
        if (k.heads == c.heads && k.next_n == c.next_n) return k;
    std::fprintf(stderr, "no kernel for H=%d next_n=%d w=%d\n", c.heads, c.next_n, c.warps);
    std::exit(2);
}

static void launch(const Problem& p, const Kernel& kernel, float* logits, cudaStream_t stream) {
    PagedMqaLogitsParams k = params_for(p, logits);
    const int grid =
        std::min<long long>(132 * kernel.blocks_per_sm, static_cast<long long>(p.c.batch) * p.max_blocks);
    kernel.fn<<<grid, (kernel.warps + 1) * 128, kernel.shared, stream>>>(k);
}

static void launch_reference(const Problem& p, float* logits, cudaStream_t stream) {
    PagedMqaLogitsParams k = params_for(p, logits);
    dim3 grid((p.max_context + 127) / 128, std::min(p.c.batch * p.c.next_n, 65535));
    paged_mqa_logits_reference<<<grid, 128, 0, stream>>>(k);
}

static void poison(const Problem& p, float* logits) {
    CHECK_CUDA(cudaMemset(logits, 0xFF, static_cast<size_t>(p.c.batch) * p.c.next_n * p.logits_stride * 4));  // NaN
}

// Compares what every token sees (and, when clean, that the rest is exactly -inf).
static bool compare(const Problem& p, double* diff_out) {
    const size_t rows = static_cast<size_t>(p.c.batch) * p.c.next_n, n = rows * p.logits_stride;
    std::vector<float> out(n), ref(n);
    CHECK_CUDA(cudaMemcpy(out.data(), p.logits, n * 4, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(ref.data(), p.reference, n * 4, cudaMemcpyDeviceToHost));
    double xy = 0, xx = 0, yy = 0;
    long long bad_mask = 0, nan = 0;
    for (size_t row = 0; row < rows; ++row) {
        const int b = static_cast<int>(row / p.c.next_n), t = static_cast<int>(row % p.c.next_n);
        int visible = p.c.lens_2d ? p.host_lens[b * p.c.next_n + t] : p.host_lens[b] - p.c.next_n + t + 1;
        visible = std::clamp(visible, 0, p.max_context);
        for (int j = 0; j < p.max_context; ++j) {
            const float x = out[row * p.logits_stride + j], y = ref[row * p.logits_stride + j];
            if (j < visible) {
                if (std::isnan(x)) ++nan;
                xy += static_cast<double>(x) * y, xx += static_cast<double>(x) * x, yy += static_cast<double>(y) * y;
            } else if (p.c.clean && !(std::isinf(x) && x < 0)) {
                ++bad_mask;
            }
        }
    }
    const double diff = (xx + yy) > 0 ? 1.0 - 2.0 * xy / (xx + yy) : 0.0;
    *diff_out = diff;
    if (bad_mask || nan) std::printf("    masked entries not -inf: %lld, NaN in visible: %lld\n", bad_mask, nan);
    return bad_mask == 0 && nan == 0 && diff < 1e-5;
}

static bool check_case(const Case& c, std::mt19937& rng, const Kernel* chosen = nullptr) {
    Problem p = make_problem(c, rng);
    const Kernel& kernel = chosen ? *chosen : kernel_for(c);
    CHECK_CUDA(cudaFuncSetAttribute(kernel.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, kernel.shared));
    poison(p, p.reference);
    launch_reference(p, p.reference, 0);
    poison(p, p.logits);
    launch(p, kernel, p.logits, 0);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    double diff = 0;
    bool ok = compare(p, &diff);
    // bitwise rerun
    const size_t bytes = static_cast<size_t>(c.batch) * c.next_n * p.logits_stride * 4;
    std::vector<unsigned char> first(bytes), second(bytes);
    CHECK_CUDA(cudaMemcpy(first.data(), p.logits, bytes, cudaMemcpyDeviceToHost));
    poison(p, p.logits);
    launch(p, kernel, p.logits, 0);
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(second.data(), p.logits, bytes, cudaMemcpyDeviceToHost));
    const bool same = first == second;  // unwritten entries keep the same poison
    // graph replay with new lengths
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    launch(p, kernel, p.logits, stream);
    CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
    CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    p.host_lens = draw_lens(c, rng, p.max_context);
    CHECK_CUDA(cudaMemcpy(p.lens, p.host_lens.data(), p.host_lens.size() * 4, cudaMemcpyHostToDevice));
    poison(p, p.reference);
    launch_reference(p, p.reference, 0);
    poison(p, p.logits);
    CHECK_CUDA(cudaGraphLaunch(exec, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaDeviceSynchronize());
    double graph_diff = 0;
    const bool graph_ok = compare(p, &graph_diff);
    cudaGraphExecDestroy(exec), cudaGraphDestroy(graph), cudaStreamDestroy(stream);
    std::printf("check H=%d next_n=%d w=%d s=%d b=%d batch=%d ctx=%d %s %s: calc_diff %.2e, rerun %s, graph replay %s (%.2e) -> %s\n",
                c.heads, c.next_n, kernel.warps, kernel.stages, kernel.blocks_per_sm, c.batch, c.avg_context, c.lens_2d ? "2-D" : "1-D",
                c.clean ? "clean" : "unclean", diff, same ? "bitwise" : "DIFFERS", graph_ok ? "ok" : "FAILED",
                graph_diff, ok && same && graph_ok ? "PASS" : "FAIL");
    free_problem(p);
    return ok && same && graph_ok;
}

static double median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static void time_case(const Case& c, std::mt19937& rng, int runs, const Kernel* chosen = nullptr) {
    Problem p = make_problem(c, rng);
    const Kernel& kernel = chosen ? *chosen : kernel_for(c);
    CHECK_CUDA(cudaFuncSetAttribute(kernel.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, kernel.shared));
    void* flush;
    const size_t flush_bytes = 256u << 20;
    CHECK_CUDA(cudaMalloc(&flush, flush_bytes));
    cudaEvent_t start, stop;
    cudaEventCreate(&start), cudaEventCreate(&stop);
    std::vector<float> times;
    for (int i = 0; i < runs + 5; ++i) {
        CHECK_CUDA(cudaMemsetAsync(flush, i, flush_bytes, 0));
        cudaEventRecord(start, 0);
        launch(p, kernel, p.logits, 0);
        cudaEventRecord(stop, 0);
        CHECK_CUDA(cudaEventSynchronize(stop));
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        if (i >= 5) times.push_back(ms * 1000.f);
    }
    CHECK_CUDA(cudaGetLastError());
    long long keys = 0, visible = 0;
    for (int b = 0; b < c.batch; ++b) {
        const int len = c.lens_2d ? p.host_lens[b * c.next_n + c.next_n - 1] : p.host_lens[b];
        keys += len;
        for (int t = 0; t < c.next_n; ++t)
            visible += c.lens_2d ? p.host_lens[b * c.next_n + t] : std::max(0, len - c.next_n + t + 1);
    }
    const double floor_us = (keys * 132.0 + visible * 4.0) / 4296e9 * 1e6;
    const double flops_us = visible * 2.0 * c.heads * 128 / 1309e12 * 1e6;
    const double us = median(times);
    std::printf("time H=%d next_n=%d w=%d s=%d b=%d batch=%d ctx=%d: %.1f us, bytes floor %.1f us (%.0f%%), flops floor %.1f us\n",
                c.heads, c.next_n, kernel.warps, kernel.stages, kernel.blocks_per_sm, c.batch, c.avg_context, us, floor_us,
                100.0 * floor_us / us, flops_us);
    cudaFree(flush);
    free_problem(p);
}

int main(int argc, char** argv) {
    std::mt19937 rng(20261201);
    const std::string mode = argc > 1 ? argv[1] : "all";
    int failures = 0;
    if (mode == "all" || mode == "check") {
        for (int heads : {32, 64})
            for (int next_n = 1; next_n <= 4; ++next_n)
                for (bool lens_2d : {false, true})
                    for (bool clean : {true, false})
                        failures += !check_case({heads, next_n, 7, 1000, lens_2d, clean}, rng);
        failures += !check_case({64, 1, 3, 1, false, true}, rng);     // one key
        failures += !check_case({64, 2, 3, 64, true, true}, rng);     // exactly a block
        failures += !check_case({32, 4, 300, 4096, false, false}, rng);
        failures += !check_case({64, 1, 1, 131072, true, true}, rng);
        for (const Kernel& k : kKernels) {  // every instance once
            Case c{k.heads, k.next_n, 37, 3000, true, true, k.warps};
            failures += !check_case(c, rng, &k);
        }
        std::printf("checks: %d failed\n", failures);
    }
    if (mode == "sweep") {  // every instance on a few shapes
        const int shapes[][2] = {{1, 32768}, {32, 4096}, {32, 32768}, {128, 32768}, {512, 4096}, {2048, 4096}};
        for (const Kernel& k : kKernels)
            for (const auto& [batch, ctx] : shapes) time_case({k.heads, k.next_n, batch, ctx, true, false}, rng, 30, &k);
    }
    if (mode == "all" || mode == "time") {
        const int runs = 30;
        for (int heads : {64, 32})
            for (int next_n : {1, 2, 3, 4})
                for (int batch : {1, 32, 128, 512, 2048})
                    for (int ctx : {4096, 32768, 131072}) {
                        if (static_cast<long long>(batch) * ctx > 2048ll * 8192 * 2) continue;
                        if ((next_n >= 3 || heads == 32) && batch > 512 && ctx > 4096) continue;
                        time_case({heads, next_n, batch, ctx, true, false}, rng, runs);
                    }
    }
    return failures == 0 ? 0 : 1;
}
