#pragma once
// The problem both device probes of the decode kernel build (paged_harness.cu, paged_timeline.cu):
// random e4m3 queries and cache, fp32 weights and scales, context lengths 0.7-1.3x the average, a
// random block table (shared blocks, or with Case::distinct a permutation: every block read once,
// as engines read the cache), and the kernel's parameters with its tensor maps.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "paged_mqa_logits_params.cuh"

#define CHECK_CUDA(x)                                                                    \
    do {                                                                                 \
        cudaError_t e_ = (x);                                                            \
        if (e_ != cudaSuccess) {                                                         \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(2);                                                                \
        }                                                                                \
    } while (0)

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
    bool distinct = false;  // every request's blocks its own (a permutation), none shared
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
    // Without `distinct`, fewer blocks than needed: blocks are shared.
    p.num_blocks = c.distinct ? c.batch * p.max_blocks : c.batch * p.max_blocks / 2 + 8;
    const size_t rows = static_cast<size_t>(c.batch) * c.next_n;
    const size_t q_bytes = rows * c.heads * 128, cache_bytes = static_cast<size_t>(p.num_blocks) * 64 * 132;
    std::vector<int> table(static_cast<size_t>(c.batch) * p.max_blocks);
    if (c.distinct) {
        std::iota(table.begin(), table.end(), 0);
        std::shuffle(table.begin(), table.end(), rng);
    } else {
        for (auto& x : table) x = static_cast<int>(rng() % p.num_blocks);
    }
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

