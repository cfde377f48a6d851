// When each CTA of the decode kernel starts and ends, over distinct cache blocks (issue 13's inputs):
// does a call lose its time to the launch, to the drain, or to some CTAs finishing after the others,
// and are the late ones the same SMs every time (then the SM is slow) or the same runs (then it is
// their blocks)? The kernel body runs inside a wrapper that stamps %globaltimer and the SM's clock
// at entry (thread 0) and at each warp's exit (the CTA's last one counts).
// Build and run (repo root, device machine):
//   nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -Icodegen/templates -Icodegen/families/sm90_mqa_logits
//     -Icodegen/families/sm90_paged_mqa_logits scripts/device/paged_timeline.cu -lcuda -o /tmp/paged_timeline
//   /tmp/paged_timeline [RUNS] [more]     (more: batch 1 x 128k, 512 x 32k and 2048 x 4k instead)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "paged_problem.cuh"
#include "sm90_paged_mqa_logits.cuh"

struct Stamps {
    unsigned long long start_ns, end_ns, start_clock, end_clock;
    unsigned sm;
};

// The global nanosecond timer and the SM this thread runs on.
__device__ __forceinline__ void read_time_and_sm(unsigned long long& ns, unsigned& sm) {
    asm volatile("mov.u64 %0, %%globaltimer;\n\tmov.u32 %1, %%smid;" : "=l"(ns), "=r"(sm));
}

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1) timed_kernel(const __grid_constant__ PagedMqaLogitsParams p,
                                                                Stamps* stamps) {
    Stamps* mine = stamps + blockIdx.x;
    if (threadIdx.x == 0) {
        read_time_and_sm(mine->start_ns, mine->sm);
        mine->start_clock = clock64();
    }
    mqa_sm90_paged::sm90_paged_mqa_logits_body<C>(p);
    if (threadIdx.x % 32 == 0) {
        unsigned long long end_ns;
        unsigned sm;
        read_time_and_sm(end_ns, sm);
        atomicMax(&mine->end_ns, end_ns);
        atomicMax(&mine->end_clock, static_cast<unsigned long long>(clock64()));
    }
}

struct Instance {
    const char* name;  // the registered variant it times
    int heads, next_n, warps;
    void (*fn)(PagedMqaLogitsParams, Stamps*);
    unsigned shared;
};
#define INSTANCE(name, h, n, w, s)                                                        \
    {name, h, n, w, timed_kernel<mqa_sm90_paged::PagedConfig<h, 128, 64, n, w, s>>, \
     mqa_sm90_paged::PagedConfig<h, 128, 64, n, w, s>::kSharedBytes}
static const Instance kInstances[] = {
    INSTANCE("pwgmma64x64x32_bkv64_r1_w2_lds16", 64, 1, 2, 16),
    INSTANCE("pwgmma64x32x32_bkv64_r1_w2_lds16", 32, 1, 2, 16),
    INSTANCE("pwgmma64x64x32_bkv64_r1_w4_lds16", 64, 1, 4, 16),
    INSTANCE("pwgmma64x128x32_bkv64_r2_w3_lds12", 64, 2, 3, 12),
    INSTANCE("pwgmma64x64x32_bkv64_r1_w2_lds8", 64, 1, 2, 8),
    INSTANCE("pwgmma64x64x32_bkv64_r1_w3_lds12", 64, 1, 3, 12),
};
constexpr int kMaxSmIds = 256;

static double percentile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * (v.size() - 1) + 0.5)];
}

// Over the entries both hold (an SM id without a CTA holds 0).
static double correlation(const std::vector<double>& x, const std::vector<double>& y) {
    double mx = 0, my = 0;
    int n = 0;
    for (size_t i = 0; i < x.size(); ++i)
        if (x[i] > 0 && y[i] > 0) mx += x[i], my += y[i], ++n;
    if (n < 2) return 0.0;
    mx /= n, my /= n;
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < x.size(); ++i)
        if (x[i] > 0 && y[i] > 0)
            sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx), syy += (y[i] - my) * (y[i] - my);
    return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0.0;
}

// One row: event time, and over the CTAs (µs from the first start): the last start, the ends'
// min / median / p90 / max, the mean busy time over the longest; then how alike two runs' per-CTA
// busy cycles are by CTA (same run of blocks) and by SM.
static void run_case(const Instance& instance, int batch, int context, int seeds, int runs) {
    void* flush;
    const size_t flush_bytes = 256u << 20;
    CHECK_CUDA(cudaMalloc(&flush, flush_bytes));
    CHECK_CUDA(cudaFuncSetAttribute(instance.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, instance.shared));
    std::mt19937 rng(20261206);
    std::printf("%s batch %d x %d (distinct blocks, 2-D lens 0.7-1.3x, %d seeds x %d runs)\n", instance.name, batch,
                context, seeds, runs);
    std::printf("  seed run | event us | last start us | end min / median / p90 / max us | mean busy / max busy\n");
    std::vector<std::vector<double>> busy_by_cta, busy_by_sm;
    for (int seed = 0; seed < seeds; ++seed) {
        Problem p = make_problem({instance.heads, instance.next_n, batch, context, true, false, instance.warps, true}, rng);
        PagedMqaLogitsParams k = params_for(p, p.logits);
        int grid = 0;
        CHECK_CUDA(cudaDeviceGetAttribute(&grid, cudaDevAttrMultiProcessorCount, 0));
        Stamps* stamps;
        CHECK_CUDA(cudaMalloc(&stamps, grid * sizeof(Stamps)));
        cudaEvent_t start, stop;
        cudaEventCreate(&start), cudaEventCreate(&stop);
        for (int run = 0; run < runs + 3; ++run) {
            CHECK_CUDA(cudaMemsetAsync(flush, run, flush_bytes, 0));
            CHECK_CUDA(cudaMemsetAsync(stamps, 0, grid * sizeof(Stamps), 0));
            cudaEventRecord(start, 0);
            instance.fn<<<grid, (instance.warps + 1) * 128, instance.shared, 0>>>(k, stamps);
            cudaEventRecord(stop, 0);
            CHECK_CUDA(cudaEventSynchronize(stop));
            CHECK_CUDA(cudaGetLastError());
            if (run < 3) continue;  // warm-up
            float ms = 0;
            cudaEventElapsedTime(&ms, start, stop);
            std::vector<Stamps> host(grid);
            CHECK_CUDA(cudaMemcpy(host.data(), stamps, grid * sizeof(Stamps), cudaMemcpyDeviceToHost));
            unsigned long long first = ~0ull;
            for (const Stamps& s : host) first = std::min(first, s.start_ns);
            std::vector<double> starts, ends, busy(grid), by_sm(kMaxSmIds, 0.0);
            for (int i = 0; i < grid; ++i) {
                starts.push_back((host[i].start_ns - first) * 1e-3);
                ends.push_back((host[i].end_ns - first) * 1e-3);
                busy[i] = static_cast<double>(host[i].end_clock - host[i].start_clock);
                if (host[i].sm < kMaxSmIds) by_sm[host[i].sm] = busy[i];
            }
            double mean_busy = 0, max_busy = 0;
            for (double b : busy) mean_busy += b / grid, max_busy = std::max(max_busy, b);
            busy_by_cta.push_back(busy);
            busy_by_sm.push_back(by_sm);
            std::printf("  %4d %3d | %8.1f | %13.2f | %6.1f / %6.1f / %6.1f / %6.1f | %.3f\n", seed, run - 3, ms * 1e3,
                        percentile(starts, 1.0), percentile(ends, 0.0), percentile(ends, 0.5), percentile(ends, 0.9),
                        percentile(ends, 1.0), mean_busy / max_busy);
        }
        cudaEventDestroy(start), cudaEventDestroy(stop);
        cudaFree(stamps);
        free_problem(p);
    }
    // Same seed (same runs of blocks), consecutive runs; and across seeds (other blocks) by SM.
    double same_cta = 0, same_sm = 0, other_sm = 0;
    int n_same = 0, n_other = 0;
    for (size_t a = 0; a + 1 < busy_by_cta.size(); ++a) {
        const bool same_seed = (a + 1) % runs != 0;
        if (same_seed) {
            same_cta += correlation(busy_by_cta[a], busy_by_cta[a + 1]);
            same_sm += correlation(busy_by_sm[a], busy_by_sm[a + 1]);
            ++n_same;
        } else {
            other_sm += correlation(busy_by_sm[a], busy_by_sm[a + 1]);
            ++n_other;
        }
    }
    std::printf("  busy cycles alike between consecutive runs (Pearson): same blocks, by CTA %.2f, by SM %.2f;"
                " other blocks, by SM %.2f\n",
                n_same ? same_cta / n_same : 0.0, n_same ? same_sm / n_same : 0.0, n_other ? other_sm / n_other : 0.0);
    cudaFree(flush);
}

int main(int argc, char** argv) {
    const int runs = argc > 1 ? std::atoi(argv[1]) : 5;
    if (argc > 2 && std::string(argv[2]) == "more") {
        run_case(kInstances[4], 1, 131072, 3, runs);
        run_case(kInstances[3], 512, 32768, 2, runs);
        run_case(kInstances[5], 2048, 4096, 2, runs);
        return 0;
    }
    run_case(kInstances[0], 32, 32768, 3, runs);
    run_case(kInstances[1], 32, 32768, 3, runs);
    run_case(kInstances[2], 128, 32768, 2, runs);
    run_case(kInstances[3], 128, 32768, 2, runs);
    run_case(kInstances[0], 32, 4096, 2, runs);
    return 0;
}
