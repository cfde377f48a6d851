#include "runtime/cuda_resources.hpp"

#include <fmt/format.h>

#include "core/check.hpp"

namespace mqajit {

CudaKernel::CudaKernel(std::shared_ptr<const CudaPrimaryContext> context, CUmodule module, std::string name)
    : context_(std::move(context)), module_(module), name_(std::move(name)) {}

CudaKernel::~CudaKernel() {
    const auto scope = ScopedContext::without_throwing(*context_);
    context_->api().cuModuleUnload(module_);
}

void CudaKernel::bind_function(std::size_t max_shared_bytes_per_block) {
    const CudaDriverApi& api = context_->api();
    const CUresult found = api.cuModuleGetFunction(&function_, module_, name_.c_str());
    MQAJIT_CHECK_KIND(not_found, found != CUDA_ERROR_NOT_FOUND,
                      "the kernel binary has no function named '{}'; the extern \"C\" name in the generated "
                      "source and the requested kernel name must agree",
                      name_);
    cuda_check(api, found, fmt::format("cuModuleGetFunction({})", name_));

    int static_shared_bytes = 0;
    cuda_check(api, api.cuFuncGetAttribute(&static_shared_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function_),
               fmt::format("cuFuncGetAttribute(SHARED_SIZE_BYTES, {})", name_));
    // NOTES: kernels may use more than 48 KiB of dynamic shared memory only after opting in, and the
    // opt-in ceiling counts static shared memory too; doing it once here keeps launch() to one call.
    const auto static_bytes = static_cast<std::size_t>(static_shared_bytes);
    max_dynamic_shared_bytes_ = max_shared_bytes_per_block > static_bytes ? max_shared_bytes_per_block - static_bytes : 0;
    cuda_check(api,
               api.cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      static_cast<int>(max_dynamic_shared_bytes_)),
               fmt::format("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES = {}, {})", max_dynamic_shared_bytes_,
                           name_));
}

CudaBuffer::CudaBuffer(std::shared_ptr<const CudaPrimaryContext> context, std::size_t bytes)
    : context_(std::move(context)), bytes_(bytes) {
    MQAJIT_CHECK(bytes > 0, "cannot allocate 0 bytes of device memory; ask for at least one byte");
    const ScopedContext scope(*context_);
    cuda_check(context_->api(), context_->api().cuMemAlloc(&pointer_, bytes),
               fmt::format("cuMemAlloc({} bytes on device {})", bytes, context_->ordinal()));
}

CudaBuffer::~CudaBuffer() {
    const auto scope = ScopedContext::without_throwing(*context_);
    context_->api().cuMemFree(pointer_);
}

CudaStream::CudaStream(std::shared_ptr<const CudaPrimaryContext> context) : context_(std::move(context)) {
    const ScopedContext scope(*context_);
    // NOTES: a blocking stream (CU_STREAM_DEFAULT) stays ordered with the legacy default stream,
    // so a copy made without a stream is done before work queued here starts.
    cuda_check(context_->api(), context_->api().cuStreamCreate(&stream_, CU_STREAM_DEFAULT), "cuStreamCreate");
}

CudaStream::~CudaStream() {
    const auto scope = ScopedContext::without_throwing(*context_);
    context_->api().cuStreamDestroy(stream_);
}

CudaEventTimer::CudaEventTimer(std::shared_ptr<const CudaPrimaryContext> context) : context_(std::move(context)) {
    const CudaDriverApi& api = context_->api();
    const ScopedContext scope(*context_);
    cuda_check(api, api.cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate(start)");
    const CUresult created = api.cuEventCreate(&stop_, CU_EVENT_DEFAULT);
    if (created != CUDA_SUCCESS) api.cuEventDestroy(start_);
    cuda_check(api, created, "cuEventCreate(stop)");
}

CudaEventTimer::~CudaEventTimer() {
    const auto scope = ScopedContext::without_throwing(*context_);
    context_->api().cuEventDestroy(start_);
    context_->api().cuEventDestroy(stop_);
}

void CudaEventTimer::record_start(void* stream) {
    cuda_check(context_->api(), context_->api().cuEventRecord(start_, static_cast<CUstream>(stream)),
               "cuEventRecord(start)");
    started_ = true;
    stopped_ = false;
}

void CudaEventTimer::record_stop(void* stream) {
    MQAJIT_CHECK(started_, "EventTimer::record_stop was called before record_start; record the start first");
    cuda_check(context_->api(), context_->api().cuEventRecord(stop_, static_cast<CUstream>(stream)),
               "cuEventRecord(stop)");
    stopped_ = true;
}

double CudaEventTimer::elapsed_ms() {
    MQAJIT_CHECK(started_ && stopped_, "EventTimer::elapsed_ms needs record_start and then record_stop first");
    const CudaDriverApi& api = context_->api();
    cuda_check(api, api.cuEventSynchronize(stop_), "cuEventSynchronize(stop)");
    float milliseconds = 0.0f;
    cuda_check(api, api.cuEventElapsedTime(&milliseconds, start_, stop_), "cuEventElapsedTime");
    return milliseconds;
}

}  // namespace mqajit
