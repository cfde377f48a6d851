#pragma once
// The CUDA objects a CudaDevice hands out. Each holds its primary context, so the context outlives
// it and its destructor runs with that context current.

#include <memory>
#include <string>

#include "runtime/cuda_context.hpp"
#include "runtime/device.hpp"

namespace mqajit {

class CudaKernel final : public LoadedKernel {
public:
    // Takes ownership of `module`.
    CudaKernel(std::shared_ptr<const CudaPrimaryContext> context, CUmodule module, std::string name);
    ~CudaKernel() override;
    CudaKernel(const CudaKernel&) = delete;
    CudaKernel& operator=(const CudaKernel&) = delete;

    std::string name() const override { return name_; }
    // Finds the function and opts it in to the block shared-memory ceiling; throws Error(driver).
    void bind_function(std::size_t max_shared_bytes_per_block);

    CUfunction function() const { return function_; }
    const CudaPrimaryContext& context() const { return *context_; }
    std::size_t max_dynamic_shared_bytes() const { return max_dynamic_shared_bytes_; }

private:
    std::shared_ptr<const CudaPrimaryContext> context_;
    CUmodule module_;
    std::string name_;
    CUfunction function_ = nullptr;
    std::size_t max_dynamic_shared_bytes_ = 0;
};

class CudaBuffer final : public DeviceBuffer {
public:
    CudaBuffer(std::shared_ptr<const CudaPrimaryContext> context, std::size_t bytes);  // throws Error(driver)
    ~CudaBuffer() override;
    CudaBuffer(const CudaBuffer&) = delete;
    CudaBuffer& operator=(const CudaBuffer&) = delete;

    void* data() const override { return reinterpret_cast<void*>(pointer_); }
    std::size_t size() const override { return bytes_; }

private:
    std::shared_ptr<const CudaPrimaryContext> context_;
    CUdeviceptr pointer_ = 0;
    std::size_t bytes_;
};

class CudaStream final : public DeviceStream {
public:
    explicit CudaStream(std::shared_ptr<const CudaPrimaryContext> context);  // throws Error(driver)
    ~CudaStream() override;
    CudaStream(const CudaStream&) = delete;
    CudaStream& operator=(const CudaStream&) = delete;

    void* handle() const override { return stream_; }

private:
    std::shared_ptr<const CudaPrimaryContext> context_;
    CUstream stream_ = nullptr;
};

class CudaEventTimer final : public EventTimer {
public:
    explicit CudaEventTimer(std::shared_ptr<const CudaPrimaryContext> context);  // throws Error(driver)
    ~CudaEventTimer() override;
    CudaEventTimer(const CudaEventTimer&) = delete;
    CudaEventTimer& operator=(const CudaEventTimer&) = delete;

    void record_start(void* stream) override;
    void record_stop(void* stream) override;
    double elapsed_ms() override;

private:
    std::shared_ptr<const CudaPrimaryContext> context_;
    CUevent start_ = nullptr;
    CUevent stop_ = nullptr;
    bool started_ = false;
    bool stopped_ = false;
};

}  // namespace mqajit
