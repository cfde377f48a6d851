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

#include "reference_paged_mqa_logits.cuh"
#include "sm90_paged_mqa_logits.cuh"

MQA_REFERENCE_PAGED_MQA_LOGITS_KERNEL(paged_mqa_logits_reference)

// (heads, next_n, math warpgroups, stages, CTAs per SM); the first of each (heads, next_n) serves checks.
#define INSTANCES(X) X(64, 1, 2, 8, 1) X(64, 1, 2, 16, 1) X(32, 1, 2, 16, 1)
#define DEFINE(h, n, w, s, b) \
    MQA_SM90_PAGED_KERNEL(paged_h##h##_n##n##_w##w##_s##s##_b##b, h, 128, 64, n, w, s, b)
INSTANCES(DEFINE)

#define CHECK_CUDA(x)                                                                    \
    do {                                                                                 \
        cudaError_t e_ = (x);                                                            \
        if (e_ != cudaSuccess) {                                                         \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(2);                                                                \
        }                                                                                \
    } while (0)

struct Kernel {
    int heads, next_n, warps, stages, blocks_per_sm;
    void (*fn)(PagedMqaLogitsParams);
    unsigned shared;
};
#define ENTRY(h, n, w, s, b)                                   \
    {h, n, w, s, b, paged_h##h##_n##n##_w##w##_s##s##_b##b, \
     mqa_sm90_paged::PagedConfig<h, 128, 64, n, w, s, b>::kSharedBytes},
static const Kernel kKernels[] = {INSTANCES(ENTRY)};

static void encode(CUtensorMap* map, CUtensorMapDataType type, int rank, const void* base, const cuuint64_t* dims,
                   const cuuint64_t* strides, const cuuint32_t* box, CUtensorMapSwizzle swizzle) {
    const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
    CUresult r = cuTensorMapEncodeTiled(map, type, rank, const_cast<void*>(base), dims, strides, box, element_strides,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        std::fprintf(stderr, "cuTensorMapEncodeTiled failed: %d\n", r);
        std::exit(2);
    }
}

__device__ unsigned hash32(unsigned long long x) {
    x ^= x >> 33, x *= 0xff51afd7ed558ccdull, x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ull, x ^= x >> 33;
    return static_cast<unsigned>(x);
}
// e4m3 with magnitudes 2^-3 .. 2^3, both signs, never the NaN codes.
__device__ unsigned char random_e4m3(unsigned h) {
    return static_cast<unsigned char>(((h & 1u) << 7) | ((4u + (h >> 1) % 7u) << 3) | ((h >> 8) & 7u));
}
__global__ void fill_e4m3(unsigned char* x, size_t n, unsigned seed) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = random_e4m3(hash32(i * 0x9E3779B97F4A7C15ull + seed));
}
__global__ void fill_uniform(float* x, size_t n, float low, float high, unsigned seed) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = low + (high - low) * (hash32(i * 0x9E3779B97F4A7C15ull + seed) >> 8) * (1.0f / 16777216.0f);
}
// Keys of every block e4m3, its 64 scales uniform in [0.25, 2].
__global__ void fill_cache(unsigned char* cache, long long blocks, unsigned seed) {
    const long long n = blocks * 64 * 132;
    for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const long long offset = i % (64 * 132);
        const unsigned h = hash32(static_cast<unsigned long long>(i) * 0x9E3779B97F4A7C15ull + seed);
        if (offset < 64 * 128) {
            cache[i] = random_e4m3(h);
        } else if (offset % 4 == 0) {
            const float s = 0.25f + 1.75f * (h >> 8) * (1.0f / 16777216.0f);
            *reinterpret_cast<float*>(cache + i) = s;
        }
    }
}

struct Case {
    int heads, next_n, batch, avg_context;
    bool lens_2d, clean;
    int warps = 2;
};

struct Problem {
    Case c;
    int max_context, max_blocks, num_blocks;
    long long logits_stride;
    unsigned char *q, *cache;
    float *weights, *logits, *reference;
    int *lens, *table;
    std::vector<int> host_lens;
};

static std::vector<int> draw_lens(const Case& c, std::mt19937& rng, int max_context) {
    std::uniform_real_distribution<double> factor(0.7, 1.3);
    std::vector<int> lens(static_cast<size_t>(c.batch) * (c.lens_2d ? c.next_n : 1));
    for (int b = 0; b < c.batch; ++b) {
        int len = std::max(c.next_n, std::min(max_context, static_cast<int>(c.avg_context * factor(rng))));
        if (c.avg_context <= 64) len = c.avg_context;  // edge cases: exactly what was asked
        if (c.lens_2d) {
            for (int t = 0; t < c.next_n; ++t) lens[b * c.next_n + t] = std::max(0, len - c.next_n + t + 1);
        } else {
            lens[b] = len;
        }
    }
    return lens;
}

static Problem make_problem(const Case& c, std::mt19937& rng) {
    Problem p{};
    p.c = c;
    p.max_context = std::max(64, static_cast<int>(c.avg_context * 1.3) + 64);
    p.max_blocks = (p.max_context + 63) / 64;
    p.logits_stride = (p.max_context + 31) / 32 * 32 + 32;  // a padded stride
    p.num_blocks = c.batch * p.max_blocks / 2 + 8;           // fewer than needed: blocks are shared
    const size_t rows = static_cast<size_t>(c.batch) * c.next_n;
    const size_t q_bytes = rows * c.heads * 128, cache_bytes = static_cast<size_t>(p.num_blocks) * 64 * 132;
    std::vector<int> table(static_cast<size_t>(c.batch) * p.max_blocks);
    for (auto& x : table) x = static_cast<int>(rng() % p.num_blocks);
    p.host_lens = draw_lens(c, rng, p.max_context);

    CHECK_CUDA(cudaMalloc(&p.q, q_bytes));
    CHECK_CUDA(cudaMalloc(&p.cache, cache_bytes));
    CHECK_CUDA(cudaMalloc(&p.weights, rows * c.heads * 4));
    CHECK_CUDA(cudaMalloc(&p.table, table.size() * 4));
    CHECK_CUDA(cudaMalloc(&p.lens, static_cast<size_t>(c.batch) * c.next_n * 4));
    CHECK_CUDA(cudaMalloc(&p.logits, rows * p.logits_stride * 4));
    CHECK_CUDA(cudaMalloc(&p.reference, rows * p.logits_stride * 4));
    const unsigned seed = rng();
    fill_e4m3<<<1024, 256>>>(p.q, q_bytes, seed);
    fill_cache<<<4096, 256>>>(p.cache, p.num_blocks, seed + 1);
    fill_uniform<<<256, 256>>>(p.weights, rows * c.heads, -1.f, 1.f, seed + 2);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpy(p.table, table.data(), table.size() * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(p.lens, p.host_lens.data(), p.host_lens.size() * 4, cudaMemcpyHostToDevice));
    return p;
}

static void free_problem(Problem& p) {
    cudaFree(p.q), cudaFree(p.cache), cudaFree(p.weights), cudaFree(p.table), cudaFree(p.lens), cudaFree(p.logits),
        cudaFree(p.reference);
}

static PagedMqaLogitsParams params_for(const Problem& p, float* logits) {
    PagedMqaLogitsParams k{};
    const Case& c = p.c;
    k.q = p.q, k.weights = p.weights, k.context_lens = p.lens, k.block_table = p.table, k.kv_cache = p.cache;
    k.logits = logits;
    k.q_stride_b = static_cast<long long>(c.next_n) * c.heads * 128;
    k.weights_stride = c.heads;
    k.context_lens_stride = c.next_n;
    k.block_table_stride = p.max_blocks;
    k.logits_stride = p.logits_stride;
    k.cache_block_bytes = 64 * 132;
    k.batch = c.batch, k.next_n = c.next_n, k.heads = c.heads, k.head_dim = 128, k.block_kv = 64;
    k.max_blocks = p.max_blocks, k.max_context_len = p.max_context, k.context_lens_2d = c.lens_2d;
    k.clean_logits = c.clean, k.num_cache_blocks = p.num_blocks;
    {
        cuuint64_t dims[3] = {128, static_cast<cuuint64_t>(c.next_n * c.heads), static_cast<cuuint64_t>(c.batch)};
        cuuint64_t strides[2] = {128, static_cast<cuuint64_t>(k.q_stride_b)};
        cuuint32_t box[3] = {128, static_cast<cuuint32_t>(c.next_n * c.heads), 1};
        encode(reinterpret_cast<CUtensorMap*>(&k.tma_q), CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, p.q, dims, strides, box,
               CU_TENSOR_MAP_SWIZZLE_128B);
    }
    {
        cuuint64_t dims[3] = {128, 64, static_cast<cuuint64_t>(p.num_blocks)};
        cuuint64_t strides[2] = {128, 64 * 132};
        cuuint32_t box[3] = {128, 64, 1};
        encode(reinterpret_cast<CUtensorMap*>(&k.tma_keys), CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, p.cache, dims, strides,
               box, CU_TENSOR_MAP_SWIZZLE_128B);
    }
    {
        cuuint64_t dims[2] = {64, static_cast<cuuint64_t>(p.num_blocks)};
        cuuint64_t strides[1] = {64 * 132};
        cuuint32_t box[2] = {64, 1};
        encode(reinterpret_cast<CUtensorMap*>(&k.tma_scales), CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, p.cache + 64 * 128,
               dims, strides, box, CU_TENSOR_MAP_SWIZZLE_NONE);
    }
    return k;
}

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


static void timeline_case(const Case& c, std::mt19937& rng, const Kernel& kernel) {
    Problem p = make_problem(c, rng);
    CHECK_CUDA(cudaFuncSetAttribute(kernel.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, kernel.shared));
    const int slots = 16, max_ctas = 264;
    unsigned long long* timeline;
    CHECK_CUDA(cudaMalloc(&timeline, max_ctas * slots * 8));
    CHECK_CUDA(cudaMemcpyToSymbol(g_paged_timeline, &timeline, sizeof(timeline)));
    void* flush;
    const size_t flush_bytes = 256u << 20;
    CHECK_CUDA(cudaMalloc(&flush, flush_bytes));
    cudaEvent_t start, stop;
    cudaEventCreate(&start), cudaEventCreate(&stop);
    std::vector<std::vector<double>> stage(16);
    std::vector<double> spread_ns, span_ns, event_us, work_ctas;
    for (int i = 0; i < 25; ++i) {
        CHECK_CUDA(cudaMemsetAsync(flush, i, flush_bytes, 0));
        CHECK_CUDA(cudaMemsetAsync(timeline, 0, max_ctas * slots * 8, 0));
        cudaEventRecord(start, 0);
        launch(p, kernel, p.logits, 0);
        cudaEventRecord(stop, 0);
        CHECK_CUDA(cudaEventSynchronize(stop));
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        if (i < 5) continue;
        event_us.push_back(ms * 1000.0);
        std::vector<unsigned long long> t(max_ctas * slots);
        CHECK_CUDA(cudaMemcpy(t.data(), timeline, t.size() * 8, cudaMemcpyDeviceToHost));
        unsigned long long first_entry = ~0ull, last_entry = 0, last_end = 0;
        int work = 0;
        for (int cta = 0; cta < max_ctas; ++cta) {
            const unsigned long long* s = &t[cta * slots];
            if (s[14] == 0) continue;
            first_entry = std::min(first_entry, s[14]), last_entry = std::max(last_entry, s[14]);
            last_end = std::max(last_end, s[15]);
            if (s[9] == 0) continue;
            ++work;
            for (int k = 1; k <= 12; ++k)
                if (s[k] != 0) stage[k].push_back(static_cast<double>(s[k] - s[0]));
        }
        spread_ns.push_back(static_cast<double>(last_entry - first_entry));
        span_ns.push_back(static_cast<double>(last_end - first_entry));
        work_ctas.push_back(work);
    }
    auto med = [](std::vector<double> v) { if (v.empty()) return 0.0; std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
    auto mx = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); };
    const char* names[16] = {"entry", "barriers initialized", "run located (scan)", "producer: first segment",
                             "producer: Q load issued", "producer: first table entry read", "producer: first key load issued",
                             "math: weights loads issued", "math: Q arrived", "math: first block's wgmma issued (keys arrived)",
                             "math: first wgmma done", "math: first epilogue done", "math: end", "", "", ""};
    std::printf("timeline H=%d next_n=%d w=%d s=%d batch=%d ctx=%d: event %.2f us (median of 20, L2 flushed), CTAs with work %.0f,"
                " CTA entry spread %.0f ns, first entry to last end %.0f ns (globaltimer medians)\n",
                c.heads, c.next_n, kernel.warps, kernel.stages, c.batch, c.avg_context, med(event_us), med(work_ctas),
                med(spread_ns), med(span_ns));
    for (int k = 1; k <= 12; ++k)
        std::printf("  %-48s median %7.0f cycles after entry, max %7.0f\n", names[k], med(stage[k]), mx(stage[k]));
    cudaFree(flush), cudaFree(timeline);
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
    if (mode == "timeline") {
        timeline_case({64, 1, 1, 4096, true, false}, rng, kKernels[0]);
        timeline_case({64, 1, 32, 4096, true, false}, rng, kKernels[1]);
        timeline_case({32, 1, 1, 4096, true, false}, rng, kKernels[2]);
        timeline_case({64, 1, 32, 32768, true, false}, rng, kKernels[1]);
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
