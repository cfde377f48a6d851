// Embedding mqajit: allocate the indexer's tensors, describe them with TensorViews, call
// mqajit::mqa_logits on a stream. Without a GPU it says so and exits 0.

#include <cuda_runtime.h>
#include <mqajit/mqajit.hpp>

#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#define CUDA_OK(call)                                                                   \
    do {                                                                                \
        cudaError_t status = (call);                                                    \
        if (status != cudaSuccess) {                                                    \
            std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(status)); \
            return 1;                                                                   \
        }                                                                               \
    } while (0)

int main() {
    std::printf("mqajit %s\n", mqajit::kVersion);
    const mqajit::RuntimeStatus status = mqajit::runtime_status();
    std::printf("tuning table: %s\n", status.system_db.empty() ? "(none found; the baseline kernel serves)"
                                                               : status.system_db.c_str());
    if (!status.gpu_available) {
        std::printf("no GPU: %s\n", status.message.c_str());
        return 0;
    }

    // One GLM-5 prefill chunk: S query rows, H=32 heads, D=128, N gathered KV rows, causal windows.
    const int s = 512, h = 32, d = 128, n = 4096;
    std::mt19937 rng(7);
    std::vector<std::uint8_t> q(static_cast<std::size_t>(s) * h * d), kv(static_cast<std::size_t>(n) * d);
    for (auto& b : q) b = static_cast<std::uint8_t>(0x30 + rng() % 0x10);  // small positive e4m3 values
    for (auto& b : kv) b = static_cast<std::uint8_t>(0x30 + rng() % 0x10);
    std::vector<float> kv_scales(n, 1.0f), weights(static_cast<std::size_t>(s) * h, 1.0f / h);
    std::vector<std::int32_t> starts(s, 0), ends(s);
    for (int i = 0; i < s; ++i) ends[i] = n - s + i + 1;

    void *dq, *dkv, *dscales, *dweights, *dstarts, *dends, *dlogits;
    CUDA_OK(cudaMalloc(&dq, q.size()));
    CUDA_OK(cudaMalloc(&dkv, kv.size()));
    CUDA_OK(cudaMalloc(&dscales, n * sizeof(float)));
    CUDA_OK(cudaMalloc(&dweights, weights.size() * sizeof(float)));
    CUDA_OK(cudaMalloc(&dstarts, s * sizeof(std::int32_t)));
    CUDA_OK(cudaMalloc(&dends, s * sizeof(std::int32_t)));
    CUDA_OK(cudaMalloc(&dlogits, static_cast<std::size_t>(s) * n * sizeof(float)));
    CUDA_OK(cudaMemcpy(dq, q.data(), q.size(), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dkv, kv.data(), kv.size(), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dscales, kv_scales.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dweights, weights.data(), weights.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dstarts, starts.data(), s * sizeof(std::int32_t), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dends, ends.data(), s * sizeof(std::int32_t), cudaMemcpyHostToDevice));

    cudaStream_t stream;
    CUDA_OK(cudaStreamCreate(&stream));
    using mqajit::DType;
    using mqajit::TensorView;
    mqajit::DispatchReport report;
    try {
        mqajit::mqa_logits(TensorView::contiguous(dq, DType::float8_e4m3, {s, h, d}),
                           TensorView::contiguous(dkv, DType::float8_e4m3, {n, d}),
                           TensorView::contiguous(dscales, DType::float32, {n}),
                           TensorView::contiguous(dweights, DType::float32, {s, h}),
                           TensorView::contiguous(dstarts, DType::int32, {s}),
                           TensorView::contiguous(dends, DType::int32, {s}),
                           TensorView::contiguous(dlogits, DType::float32, {s, n}),
                           {.clean_logits = true, .stream = stream, .report = &report});
    } catch (const mqajit::Error& e) {
        std::fprintf(stderr, "mqa_logits failed: %s\n", e.what());
        return 1;
    }
    CUDA_OK(cudaStreamSynchronize(stream));
    std::vector<float> row(n);
    CUDA_OK(cudaMemcpy(row.data(), dlogits, n * sizeof(float), cudaMemcpyDeviceToHost));
    std::printf("kernel %s (%s); row 0: logits[0][0] = %g, logits[0][%d] = %g (masked)\n", report.kernel.c_str(),
                report.reason.c_str(), row[0], n - 1, row[n - 1]);
    for (void* p : {dq, dkv, dscales, dweights, dstarts, dends, dlogits}) cudaFree(p);
    cudaStreamDestroy(stream);
    return 0;
}
