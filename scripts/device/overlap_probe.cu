// Does one warpgroup's head-sum epilogue slow down while another warpgroup's wgmma runs on the same
// SM? Issue 12's profile (docs/PERFORMANCE.md, 2026-12-03) found the sm90 prefill tile costing about
// the tensor time plus the epilogue's issue time, as if the two never overlapped. This probe times
// the two pieces alone and together, without TMA, a producer or global loads in the loop:
//   epilogue   one warpgroup runs the family's epilogue (relu, weight, head sum, quad exchange,
//              stores) on accumulators it already holds, tile after tile
//   wgmma      one warpgroup runs the tile's wgmmas (4 x m64nNk32, K = 128) and waits, tile after tile
//   both       the two at once, in two warpgroups of one block
//   kernel     W warpgroups each run wgmma, wait, epilogue per tile (the kernel's loop, minus the
//              pipeline's barriers); W = 3 at N = 256 is what a block without a producer warpgroup
//              has, W = 4 at N = 128 is DeepGEMM's layout
// for tiles of r query rows x H heads (N = r x H). One block per SM, every SM busy. Cycles per tile
// come from clock64() around each warpgroup's loop (the median over blocks); `kernel` reports the
// SM's cycles per tile and the tensor pipe's share of them (the `wgmma` mode's cycles per tile
// over them).
// Build and run (repo root, device machine):
//   nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -Xptxas -v \
//     -Icodegen/templates -Icodegen/families/sm90_mqa_logits scripts/device/overlap_probe.cu -o /tmp/overlap_probe
//   /tmp/overlap_probe [tiles]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "sm90_epilogue.cuh"
#include "sm90_primitives.cuh"
#include "sm90_wgmma.cuh"

using namespace mqa_sm90;

namespace {

constexpr int kHeadDim = 128;
constexpr unsigned kKvBytes = 64 * kHeadDim, kMaxQBytes = 256 * kHeadDim;
// One block per SM: more dynamic shared memory than two blocks could share (the tiles need 41 KiB).
constexpr unsigned kSharedBytes = 200 * 1024;

enum Mode { kEpilogue = 0, kWgmma = 1, kBoth = 2, kKernel = 3 };

template <int kN>
__device__ __forceinline__ void tile_wgmma(float (&acc)[kN / 2], u32 kv_low, u32 q_low) {
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < kHeadDim / 32; ++k)
        Wgmma<kN>::run(acc, descriptor_from_low<kHeadDim>(kv_low + k * 2), descriptor_from_low<kHeadDim>(q_low + k * 2),
                       k > 0 ? 1 : 0);
    wgmma_commit();
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) fence_operand(acc[i]);
}

// The sm90 family's epilogue (sm90_consumer.cuh's MathGroup::epilogue, then sm90_epilogue.cuh's
// reduce_quad itself), with the stores going to a slot of this thread's. The
// weights: kWeightsShared reads each (row, head pair)'s from the warpgroup's slice of shared memory,
// as the kernel must where the accumulators leave no room for them (ThreadWeights<C, true>); else
// a head pair's weights are the same for every row here (the kernel holds one pair per row and
// block in registers).
template <int kRows, int kHeads, bool kWeightsShared>
__device__ __forceinline__ void tile_epilogue(const float (&acc)[kRows * kHeads / 2], const float (&w)[kHeads / 4],
                                              const float* pair, int quad_lane, float scale, float* out) {
    constexpr int kBlocksPerRow = kHeads / 8;
    float sums[2 * kRows];
#pragma unroll
    for (int i = 0; i < 2 * kRows; ++i) sums[i] = 0.f;
#pragma unroll
    for (int j = 0; j < kBlocksPerRow; ++j)
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
            const int block = r * kBlocksPerRow + j;
            const float2 weight = kWeightsShared ? *reinterpret_cast<const float2*>(pair + block * 8)
                                                 : make_float2(w[2 * j], w[2 * j + 1]);
            sums[2 * r] = fmaf(weight.x, fmaxf(acc[block * 4 + 0], 0.f), sums[2 * r]);
            sums[2 * r] = fmaf(weight.y, fmaxf(acc[block * 4 + 1], 0.f), sums[2 * r]);
            sums[2 * r + 1] = fmaf(weight.x, fmaxf(acc[block * 4 + 2], 0.f), sums[2 * r + 1]);
            sums[2 * r + 1] = fmaf(weight.y, fmaxf(acc[block * 4 + 3], 0.f), sums[2 * r + 1]);
        }
    reduce_quad<kRows>(sums, quad_lane);
#pragma unroll
    for (int k = 0; k < QuadReduction<kRows>::kHeld; ++k) out[k] = sums[k] * scale;
}

template <int kRows, int kHeads, int kGroups, bool kWeightsShared>
__global__ void __launch_bounds__(kGroups * 128, 1)
    probe(int mode, int tiles, const float* init, float* out, long long* cycles) {
    constexpr int kN = kRows * kHeads;
    static_assert(QuadReduction<kRows>::kHeld <= 4, "a thread's slot holds four results");
    extern __shared__ __align__(1024) unsigned char raw[];
    const u32 misalignment = shared_address(raw) & 1023u;
    unsigned char* base = raw + (misalignment == 0 ? 0 : 1024 - misalignment);
    for (unsigned i = threadIdx.x; i < (kKvBytes + kMaxQBytes) / 4; i += blockDim.x)
        reinterpret_cast<u32*>(base)[i] = 0x38383838u * (i & 1);  // e4m3 1.0 in every other word
    float* const weight_slices = reinterpret_cast<float*>(base + kKvBytes + kMaxQBytes);  // [group][kN]
    for (unsigned i = threadIdx.x; i < 4 * kN; i += blockDim.x) weight_slices[i] = init[i % 256];
    __syncthreads();
    const int group = static_cast<int>(threadIdx.x / 128);
    const int lane = static_cast<int>(threadIdx.x % 32);
    const u32 kv_low = descriptor_low<kHeadDim>(base), q_low = descriptor_low<kHeadDim>(base + kKvBytes);
    float acc[kN / 2], w[kHeads / 4];
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) acc[i] = init[(threadIdx.x + i) % 256] - 0.5f;
#pragma unroll
    for (int i = 0; i < kHeads / 4; ++i) w[i] = init[(threadIdx.x * 3 + i) % 256];
    float* slot = out + (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
    const float scale = init[lane];

    const bool runs_wgmma = mode == kWgmma ? group == 0 : mode == kBoth ? group == 0 : mode == kKernel;
    const bool runs_epilogue = mode == kEpilogue ? group == 0 : mode == kBoth ? group == 1 : mode == kKernel;
    if (!runs_wgmma && !runs_epilogue) return;
    asm volatile("bar.sync %0, 128;" ::"r"(1 + group));
    const long long start = clock64();
    for (int t = 0; t < tiles; ++t) {
        if (runs_wgmma) {
            tile_wgmma<kN>(acc, kv_low, q_low);
        } else {
#pragma unroll
            for (int i = 0; i < kN / 2; ++i) fence_operand(acc[i]);  // held accumulators, read anew each tile
        }
        if (runs_epilogue)
            tile_epilogue<kRows, kHeads, kWeightsShared>(acc, w, weight_slices + group * kN + 2 * (lane % 4), lane % 4,
                                                         scale, slot);
    }
    asm volatile("bar.sync %0, 128;" ::"r"(1 + group));
    if (threadIdx.x % 128 == 0) cycles[blockIdx.x * 4 + group] = clock64() - start;
    if (!runs_epilogue && acc[0] == 12345.f) slot[0] = acc[1];  // keeps the wgmma results alive
}

struct Result {
    double cycles_per_tile;  // median over blocks of the slowest participating warpgroup's
    double ms;
};

template <int kRows, int kHeads, int kGroups, bool kWeightsShared>
Result run(int mode, int tiles, int blocks, const float* init, float* out, long long* cycles) {
    const auto kernel = probe<kRows, kHeads, kGroups, kWeightsShared>;
    std::vector<long long> host(static_cast<size_t>(blocks) * 4, 0);
    cudaMemset(cycles, 0, host.size() * sizeof(long long));
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes);
    kernel<<<blocks, kGroups * 128, kSharedBytes>>>(mode, tiles / 10, init, out, cycles);  // warm-up
    cudaEvent_t begin, end;
    cudaEventCreate(&begin);
    cudaEventCreate(&end);
    cudaEventRecord(begin);
    kernel<<<blocks, kGroups * 128, kSharedBytes>>>(mode, tiles, init, out, cycles);
    cudaEventRecord(end);
    const cudaError_t error = cudaEventSynchronize(end);
    if (error != cudaSuccess || cudaGetLastError() != cudaSuccess) {
        std::fprintf(stderr, "probe r%d H=%d W=%d mode %d failed: %s\n", kRows, kHeads, kGroups, mode,
                     cudaGetErrorString(error));
        std::exit(2);
    }
    float ms = 0.f;
    cudaEventElapsedTime(&ms, begin, end);
    cudaMemcpy(host.data(), cycles, host.size() * sizeof(long long), cudaMemcpyDeviceToHost);
    std::vector<double> per_block;
    for (int b = 0; b < blocks; ++b) {
        long long slowest = 0;
        for (int g = 0; g < 4; ++g) slowest = std::max(slowest, host[static_cast<size_t>(b) * 4 + g]);
        per_block.push_back(static_cast<double>(slowest) / tiles);
    }
    std::nth_element(per_block.begin(), per_block.begin() + blocks / 2, per_block.end());
    return {per_block[static_cast<size_t>(blocks) / 2], ms};
}

// Every mode for tiles of kRows x kHeads, and the kernel's loop with kGroups math warpgroups.
template <int kRows, int kHeads, int kGroups, bool kWeightsShared = false>
void report(int tiles, int blocks, const float* init, float* out, long long* cycles) {
    constexpr int kN = kRows * kHeads;
    const double flops_per_tile = 64.0 * kN * kHeadDim * 2;
    const Result epilogue = run<kRows, kHeads, 2, kWeightsShared>(kEpilogue, tiles, blocks, init, out, cycles);
    const Result wgmma = run<kRows, kHeads, 2, kWeightsShared>(kWgmma, tiles, blocks, init, out, cycles);
    const Result both = run<kRows, kHeads, 2, kWeightsShared>(kBoth, tiles, blocks, init, out, cycles);
    const Result kernel = run<kRows, kHeads, kGroups, kWeightsShared>(kKernel, tiles, blocks, init, out, cycles);
    const double per_tile = kernel.cycles_per_tile / kGroups;  // the SM's cycles per tile
    std::printf("r%d H=%d (N=%d), W=%d%s: epilogue alone %.1f, wgmma alone %.1f, both at once %.1f cycles a tile "
                "(%s); kernel loop %.1f a tile per warpgroup, %.1f per tile of the SM, tensor pipe busy %.0f%% "
                "(%.0f TFLOP/s; wgmma alone %.0f)\n",
                kRows, kHeads, kN, kGroups, kWeightsShared ? ", weights in shared memory" : "", epilogue.cycles_per_tile, wgmma.cycles_per_tile, both.cycles_per_tile,
                both.cycles_per_tile < 1.1 * std::max(epilogue.cycles_per_tile, wgmma.cycles_per_tile)
                    ? "they overlap"
                    : "they do not overlap fully",
                kernel.cycles_per_tile, per_tile, 100.0 * wgmma.cycles_per_tile / per_tile,
                flops_per_tile * tiles * kGroups * blocks / (kernel.ms * 1e9),
                flops_per_tile * tiles * blocks / (wgmma.ms * 1e9));
}

}  // namespace

int main(int argc, char** argv) {
    const int tiles = argc > 1 ? std::atoi(argv[1]) : 20000;
    cudaDeviceProp properties{};
    cudaGetDeviceProperties(&properties, 0);
    const int blocks = properties.multiProcessorCount;
    float *init = nullptr, *out = nullptr;
    long long* cycles = nullptr;
    cudaMalloc(&init, 256 * sizeof(float));
    cudaMalloc(&out, static_cast<size_t>(blocks) * 512 * 4 * sizeof(float));
    cudaMalloc(&cycles, static_cast<size_t>(blocks) * 4 * sizeof(long long));
    std::vector<float> values(256);
    for (int i = 0; i < 256; ++i) values[static_cast<size_t>(i)] = 0.25f + 0.5f * static_cast<float>((i * 37) % 64) / 64.f;
    cudaMemcpy(init, values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice);
    std::printf("%s, %d SMs, %d tiles per warpgroup; a tile is 64 KV rows x N (row, head) columns, K = %d\n",
                properties.name, blocks, tiles, kHeadDim);
    report<8, 32, 2>(tiles, blocks, init, out, cycles);  // GLM-5's served r8 w2
    report<8, 32, 2, true>(tiles, blocks, init, out, cycles);
    report<8, 32, 3, true>(tiles, blocks, init, out, cycles);  // without a producer warpgroup: no room for weights
    report<4, 32, 2>(tiles, blocks, init, out, cycles);
    report<4, 32, 4>(tiles, blocks, init, out, cycles);  // DeepGEMM's layout at H=32
    report<4, 64, 2>(tiles, blocks, init, out, cycles);  // DeepSeek-V3.2's served r4 w2
    report<4, 64, 2, true>(tiles, blocks, init, out, cycles);
    report<4, 64, 3, true>(tiles, blocks, init, out, cycles);
    return 0;
}
