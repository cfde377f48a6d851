#pragma once
// The paged_mqa_logits reference kernel: obviously correct, not fast. One thread per output element,
// fp32, e4m3 decoded in software, every size read from `p`, keys found through the block table one by
// one. nvcc (NVIDIA) and clang -x hip (AMD, with hip_minimal.cuh) compile it at build time, under one
// name. Launch: grid (ceil(max_context_len / 128), min(B * next_n, 65535)), block 128, no shared
// memory; rows past the grid's height loop. Columns a token does not see get -inf with clean_logits
// and are left alone otherwise.

#include "mqa_device_common.cuh"
#include "paged_mqa_logits_params.cuh"

#if defined(__CUDACC__) || defined(__HIP_DEVICE_COMPILE__)

namespace mqa_paged_reference {

using mqa_device::negative_infinity;

// Logits column `col` of rows first_row, first_row + row_step, ...
__device__ __forceinline__ void logits_column(const PagedMqaLogitsParams& p, int col, long long first_row,
                                              long long row_step) {
    if (col >= p.max_context_len) return;
    const long long rows = static_cast<long long>(p.batch) * p.next_n;
    for (long long row = first_row; row < rows; row += row_step) {
        const int request = static_cast<int>(row / p.next_n);
        const int token = static_cast<int>(row % p.next_n);
        int visible = p.context_lens_2d ? p.context_lens[request * p.context_lens_stride + token]
                                        : p.context_lens[request] - p.next_n + token + 1;
        visible = mqa::min_int(mqa::max_int(visible, 0), p.max_context_len);
        float* out = p.logits + row * p.logits_stride + col;
        if (col >= visible) {
            if (p.clean_logits) *out = negative_infinity();
            continue;
        }
        const long long cache_block = p.block_table[request * p.block_table_stride + col / p.block_kv];
        const int slot = col % p.block_kv;
        const unsigned char* block = p.kv_cache + cache_block * p.cache_block_bytes;
        const unsigned char* key = block + static_cast<long long>(slot) * p.head_dim;
        const float scale = reinterpret_cast<const float*>(block + static_cast<long long>(p.block_kv) * p.head_dim)[slot];
        const unsigned char* q_token = p.q + request * p.q_stride_b + static_cast<long long>(token) * p.heads * p.head_dim;
        const float* w = p.weights + row * p.weights_stride;
        float weighted_sum = 0.0f;
        for (int head = 0; head < p.heads; ++head) {
            const unsigned char* q_row = q_token + head * p.head_dim;
            float dot = 0.0f;
            for (int d = 0; d < p.head_dim; ++d) dot += mqa::e4m3_to_float(q_row[d]) * mqa::e4m3_to_float(key[d]);
            weighted_sum += w[head] * (dot > 0.0f ? dot : 0.0f);
        }
        *out = scale * weighted_sum;
    }
}

}  // namespace mqa_paged_reference

// Defines `extern "C" __global__ void NAME(PagedMqaLogitsParams p)`, launched as the header says.
#if defined(__HIP__)
#define MQA_REFERENCE_PAGED_MQA_LOGITS_KERNEL(NAME)                                                               \
    extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(128, 128))) NAME(PagedMqaLogitsParams p) { \
        mqa_paged_reference::logits_column(p, hip_minimal::block_x() * 128 + hip_minimal::thread_x(),              \
                                           hip_minimal::block_y(), hip_minimal::grid_blocks_y());                  \
    }
#else
#include "grid_dependency.cuh"
#define MQA_REFERENCE_PAGED_MQA_LOGITS_KERNEL(NAME)                                                                 \
    extern "C" __global__ void __launch_bounds__(128) NAME(const __grid_constant__ PagedMqaLogitsParams p) {       \
        mqa_pdl::grid_dependency_wait();                                                                           \
        mqa_paged_reference::logits_column(p, blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y, gridDim.y);       \
    }
#endif

#endif  // __CUDACC__ || __HIP_DEVICE_COMPILE__
