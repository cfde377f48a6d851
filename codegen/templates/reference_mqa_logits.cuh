#pragma once
// The reference kernel: obviously correct, not fast. One thread per output element, fp32, e4m3
// decoded in software (no conversion instruction), heads and head_dim read from `p`. nvcc (NVIDIA)
// and clang -x hip (AMD, with hip_minimal.cuh) compile it at build time, under one name.
// Launch: grid (ceil(N / 128), min(S, 65535)), block 128, no shared memory; rows past the grid's
// height loop. With clean_logits it writes -inf outside each row's clamped window, otherwise the
// value everywhere the row holds (mqa_logits_output.cuh: bf16 and compressed rows too).

#include "mqa_device_common.cuh"
#include "mqa_logits_output.cuh"
#include "mqa_logits_params.cuh"

#if defined(__CUDACC__) || defined(__HIP_DEVICE_COMPILE__)

namespace mqa_reference {

using mqa_device::negative_infinity;

// Logits column `kv` of rows first_row, first_row + row_step, ...
__device__ __forceinline__ void logits_column(const MqaLogitsParams& p, int kv, int first_row, int row_step) {
    if (kv >= p.seq_len_kv) return;
    const unsigned char* kv_row = p.kv + kv * p.kv_stride_n;

    for (int row = first_row; row < p.seq_len; row += row_step) {
        const mqa_output::LogitsRow out = mqa_output::logits_row(p, row);
        if (kv < out.stored.begin || kv >= out.stored.end) continue;
        const mqa::Range window = mqa::clamp_window(p.cu_starts[row], p.cu_ends[row], p.seq_len_kv);
        if (p.clean_logits && (kv < window.begin || kv >= window.end)) {
            mqa_output::store(p, out.base, kv, negative_infinity());
            continue;
        }
        float weighted_sum = 0.0f;
        for (int head = 0; head < p.heads; ++head) {
            const unsigned char* q_row = p.q + row * p.q_stride_s + head * p.head_dim;
            float dot = 0.0f;
            for (int d = 0; d < p.head_dim; ++d) dot += mqa::e4m3_to_float(q_row[d]) * mqa::e4m3_to_float(kv_row[d]);
            weighted_sum += p.weights[row * p.weights_stride_s + head] * (dot > 0.0f ? dot : 0.0f);
        }
        mqa_output::store(p, out.base, kv, p.kv_scales[kv] * weighted_sum);
    }
}

}  // namespace mqa_reference

// Defines `extern "C" __global__ void NAME(MqaLogitsParams p)`, launched as the header says.
#if defined(__HIP__)
#define MQA_REFERENCE_MQA_LOGITS_KERNEL(NAME)                                                               \
    extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(128, 128))) NAME(MqaLogitsParams p) { \
        mqa_reference::logits_column(p, hip_minimal::block_x() * 128 + hip_minimal::thread_x(),              \
                                     hip_minimal::block_y(), hip_minimal::grid_blocks_y());                  \
    }
#else
#include "grid_dependency.cuh"
#define MQA_REFERENCE_MQA_LOGITS_KERNEL(NAME)                                                                \
    extern "C" __global__ void __launch_bounds__(128) NAME(const __grid_constant__ MqaLogitsParams p) {     \
        mqa_pdl::grid_dependency_wait();                                                                     \
        mqa_reference::logits_column(p, blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y, gridDim.y);       \
    }
#endif

#endif  // __CUDACC__ || __HIP_DEVICE_COMPILE__
