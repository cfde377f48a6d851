#pragma once
// The reference kernel: obviously correct, not fast. One thread per output element, fp32 on CUDA
// cores, e4m3 decoded in software (no conversion instruction), heads and head_dim read from `p`.
// Launch: grid (ceil(N / 128), min(S, 65535)), block 128, no shared memory; rows past gridDim.y loop.
// With clean_logits it writes -inf outside each row's clamped window, otherwise the value everywhere.

#include "mqa_common.cuh"
#include "mqa_logits_params.cuh"

extern "C" __global__ void __launch_bounds__(128) mqa_logits_reference(const __grid_constant__ MqaLogitsParams p) {
    const int kv = blockIdx.x * blockDim.x + threadIdx.x;
    if (kv >= p.seq_len_kv) return;
    const unsigned char* kv_row = p.kv + kv * p.kv_stride_n;

    for (int row = blockIdx.y; row < p.seq_len; row += gridDim.y) {
        float* out = p.logits + row * p.logits_stride_s + kv;
        const mqa::Range window = mqa::clamp_window(p.cu_starts[row], p.cu_ends[row], p.seq_len_kv);
        if (p.clean_logits && (kv < window.begin || kv >= window.end)) {
            *out = mqa::negative_infinity();
            continue;
        }
        float weighted_sum = 0.0f;
        for (int head = 0; head < p.heads; ++head) {
            const unsigned char* q_row = p.q + row * p.q_stride_s + head * p.head_dim;
            float dot = 0.0f;
            for (int d = 0; d < p.head_dim; ++d) dot += mqa::e4m3_to_float(q_row[d]) * mqa::e4m3_to_float(kv_row[d]);
            weighted_sum += p.weights[row * p.weights_stride_s + head] * (dot > 0.0f ? dot : 0.0f);
        }
        *out = p.kv_scales[kv] * weighted_sum;
    }
}
