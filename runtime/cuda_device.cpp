#include "runtime/cuda_device.hpp"

#include <cstring>

#include <fmt/format.h>

#include "codegen/templates/mqa_logits_params.cuh"
#include "core/check.hpp"
#include "runtime/cuda_resources.hpp"
#include "runtime/launch_checks.hpp"

namespace mqajit {
namespace {

static_assert(sizeof(MqaTensorMap) == sizeof(CUtensorMap), "MqaTensorMap must hold exactly one CUtensorMap");

constexpr std::uint64_t kMaxTensorDim = 1ull << 32;
constexpr std::uint64_t kMaxTensorStrideBytes = 1ull << 40;
constexpr std::uint32_t kMaxBoxElements = 256;

CUtensorMapSwizzle swizzle_mode(int swizzle_bytes) {
    switch (swizzle_bytes) {
        case 0: return CU_TENSOR_MAP_SWIZZLE_NONE;
        case 32: return CU_TENSOR_MAP_SWIZZLE_32B;
        case 64: return CU_TENSOR_MAP_SWIZZLE_64B;
        default: return CU_TENSOR_MAP_SWIZZLE_128B;
    }
}

CUdeviceptr device_pointer(const void* pointer) { return reinterpret_cast<CUdeviceptr>(pointer); }

}  // namespace

std::string arch_for_compute_capability(int major, int minor) {
    return fmt::format("sm_{}{}{}", major, minor, major >= 9 ? "a" : "");
}

void check_tensor_map_request(const TensorMapRequest& request) {
    MQAJIT_CHECK(request.rank == 2 || request.rank == 3, "tensor map rank is {}; use 2 or 3", request.rank);
    MQAJIT_CHECK(request.element_bytes == 1 || request.element_bytes == 4,
                 "tensor map element size is {} bytes; use 1 (fp8/uint8) or 4 (fp32)", request.element_bytes);
    MQAJIT_CHECK(request.swizzle_bytes == 0 || request.swizzle_bytes == 32 || request.swizzle_bytes == 64 ||
                     request.swizzle_bytes == 128,
                 "tensor map swizzle is {} bytes; use 0, 32, 64 or 128", request.swizzle_bytes);
    MQAJIT_CHECK(request.base != nullptr && reinterpret_cast<std::uintptr_t>(request.base) % 16 == 0,
                 "tensor map base {} must be a non-null device address aligned to 16 bytes", request.base);
    for (int dim = 0; dim < request.rank; ++dim) {
        MQAJIT_CHECK(request.dims[dim] >= 1 && request.dims[dim] <= kMaxTensorDim,
                     "tensor map dims[{}] is {}; each dimension must be 1 to 2^32 elements", dim, request.dims[dim]);
        MQAJIT_CHECK(request.box[dim] >= 1 && request.box[dim] <= kMaxBoxElements,
                     "tensor map box[{}] is {}; each box edge must be 1 to 256 elements", dim, request.box[dim]);
    }
    for (int dim = 0; dim + 1 < request.rank; ++dim) {
        const std::uint64_t stride = request.strides_bytes[dim];
        MQAJIT_CHECK(stride % 16 == 0 && stride > 0 && stride < kMaxTensorStrideBytes,
                     "tensor map strides_bytes[{}] is {}; strides must be positive multiples of 16 below 2^40 "
                     "(pad the row)",
                     dim, stride);
    }
    const std::uint64_t inner_box_bytes = std::uint64_t{request.box[0]} * request.element_bytes;
    MQAJIT_CHECK(inner_box_bytes % 16 == 0, "tensor map inner box is {} bytes; it must be a multiple of 16 bytes",
                 inner_box_bytes);
    MQAJIT_CHECK(request.swizzle_bytes == 0 || inner_box_bytes <= static_cast<std::uint64_t>(request.swizzle_bytes),
                 "tensor map inner box is {} bytes but the {}-byte swizzle spans at most {}; shrink box[0] or "
                 "widen the swizzle",
                 inner_box_bytes, request.swizzle_bytes, request.swizzle_bytes);
}

CudaDevice::CudaDevice(std::shared_ptr<const CudaDriverApi> api, int ordinal)
    : context_(std::make_shared<CudaPrimaryContext>(std::move(api), ordinal)) {
    const CudaDriverApi& driver = this->api();
    const CUdevice device = context_->device();
    auto attribute = [&](CUdevice_attribute which, std::string_view what) {
        int value = 0;
        cuda_check(driver, driver.cuDeviceGetAttribute(&value, which, device),
                   fmt::format("cuDeviceGetAttribute({}, device {})", what, ordinal));
        return value;
    };
    compute_major_ = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR");
    arch_ = arch_for_compute_capability(compute_major_,
                                        attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR"));
    multiprocessor_count_ = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT");
    max_shared_bytes_per_block_ = static_cast<std::size_t>(
        attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"));

    char name[256] = {};
    cuda_check(driver, driver.cuDeviceGetName(name, sizeof(name) - 1, device),
               fmt::format("cuDeviceGetName(device {})", ordinal));
    name_ = name;
    int version = 0;
    cuda_check(driver, driver.cuDriverGetVersion(&version), "cuDriverGetVersion");
    driver_version_ = format_cuda_version(version);
}

std::shared_ptr<LoadedKernel> CudaDevice::load(std::span<const char> binary, const std::string& kernel_name) {
    MQAJIT_CHECK(!binary.empty(), "cannot load kernel {} from an empty binary; compile it first", kernel_name);
    const ScopedContext scope(*context_);
    CUmodule module = nullptr;
    cuda_check(api(), api().cuModuleLoadData(&module, binary.data()),
               fmt::format("cuModuleLoadData({} bytes holding {}, on {} {})", binary.size(), kernel_name, name_, arch_));
    auto kernel = std::make_shared<CudaKernel>(context_, module, kernel_name);
    kernel->bind_function(max_shared_bytes_per_block_);
    return kernel;
}

void CudaDevice::launch(const LoadedKernel& kernel, const LaunchConfig& config, void* stream, const void* argument,
                        std::size_t argument_bytes) {
    const auto* cuda_kernel = dynamic_cast<const CudaKernel*>(&kernel);
    MQAJIT_CHECK(cuda_kernel != nullptr, "kernel {} was not loaded by the CUDA backend; load it with this device",
                 kernel.name());
    check_same_device(kernel, cuda_kernel->context().context() == context(), cuda_kernel->context().ordinal(),
                      ordinal());
    check_launch_arguments(kernel, config, argument, argument_bytes);
    MQAJIT_CHECK(config.dynamic_shared_bytes <= cuda_kernel->max_dynamic_shared_bytes(),
                 "kernel {} asks for {} bytes of dynamic shared memory; {} allows at most {}: choose a variant with "
                 "fewer stages or smaller tiles",
                 kernel.name(), config.dynamic_shared_bytes, name_, cuda_kernel->max_dynamic_shared_bytes());

    void* parameters[] = {const_cast<void*>(argument)};
    // NOTES: programmatic dependent launch exists from sm_90 on; older devices launch as usual.
    const bool programmatic = config.programmatic_dependent_launch && compute_major_ >= 9;
    CUresult launched = CUDA_SUCCESS;
    if (programmatic) {
        CUlaunchAttribute attribute{};
        attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attribute.value.programmaticStreamSerializationAllowed = 1;
        CUlaunchConfig launch{};
        launch.gridDimX = config.grid_x, launch.gridDimY = config.grid_y, launch.gridDimZ = config.grid_z;
        launch.blockDimX = config.block_x, launch.blockDimY = config.block_y, launch.blockDimZ = config.block_z;
        launch.sharedMemBytes = static_cast<unsigned>(config.dynamic_shared_bytes);
        launch.hStream = static_cast<CUstream>(stream);
        launch.attrs = &attribute;
        launch.numAttrs = 1;
        launched = api().cuLaunchKernelEx(&launch, cuda_kernel->function(), parameters, nullptr);
        if (launched == CUDA_SUCCESS) programmatic_launches_.fetch_add(1, std::memory_order_relaxed);
    } else {
        launched = api().cuLaunchKernel(cuda_kernel->function(), config.grid_x, config.grid_y, config.grid_z,
                                        config.block_x, config.block_y, config.block_z,
                                        static_cast<unsigned>(config.dynamic_shared_bytes),
                                        static_cast<CUstream>(stream), parameters, nullptr);
    }
    if (launched != CUDA_SUCCESS) [[unlikely]] {
        cuda_check(api(), launched,
                   fmt::format("{}({}, grid ({}, {}, {}), block ({}, {}, {}), {} bytes shared)",
                               programmatic ? "cuLaunchKernelEx with programmatic dependent launch" : "cuLaunchKernel",
                               kernel.name(), config.grid_x, config.grid_y, config.grid_z, config.block_x,
                               config.block_y, config.block_z, config.dynamic_shared_bytes));
    }
}

void CudaDevice::encode_tensor_map(const TensorMapRequest& request, MqaTensorMap& out) const {
    check_tensor_map_request(request);
    const cuuint64_t dims[3] = {request.dims[0], request.dims[1], request.dims[2]};
    const cuuint64_t strides[2] = {request.strides_bytes[0], request.strides_bytes[1]};
    const cuuint32_t box[3] = {request.box[0], request.box[1], request.box[2]};
    const cuuint32_t element_strides[3] = {1, 1, 1};
    const CUtensorMapDataType type =
        request.element_bytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    // NOTES: out-of-bounds elements are filled with zeros (FLOAT_OOB_FILL_NONE), which the kernels
    // rely on at the ragged end of kv; L2 promotion of 256 B matches the 128-byte swizzled rows.
    // NOTES: encoded into a local CUtensorMap and copied out: CUDA 13's cuda.h aligns CUtensorMap to
    // 128 bytes while MqaTensorMap (64, what the TMA instructions need) sits inside the kernel argument.
    CUtensorMap encoded_map{};
    const CUresult encoded = api().cuTensorMapEncodeTiled(
        &encoded_map, type, static_cast<cuuint32_t>(request.rank), const_cast<void*>(request.base),
        dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle_mode(request.swizzle_bytes),
        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (encoded != CUDA_SUCCESS) [[unlikely]] {
        cuda_check(api(), encoded,
                   fmt::format("cuTensorMapEncodeTiled(rank {}, dims [{}, {}, {}], strides [{}, {}] bytes, box [{}, {}, "
                               "{}], {}-byte elements, swizzle {})",
                               request.rank, dims[0], dims[1], dims[2], strides[0], strides[1], box[0], box[1], box[2],
                               request.element_bytes, request.swizzle_bytes));
    }
    std::memcpy(&out, &encoded_map, sizeof(out));
}

void CudaDevice::make_current() {
    cuda_check(api(), api().cuCtxSetCurrent(context()), fmt::format("cuCtxSetCurrent(device {})", ordinal()));
}

std::unique_ptr<DeviceBuffer> CudaDevice::allocate(std::size_t bytes) {
    return std::make_unique<CudaBuffer>(context_, bytes);
}

void CudaDevice::copy_to_device(void* dst, const void* src, std::size_t bytes, void* stream) {
    if (bytes == 0) return;
    const ScopedContext scope(*context_);
    if (stream == nullptr) {
        cuda_check(api(), api().cuMemcpyHtoD(device_pointer(dst), src, bytes),
                   fmt::format("cuMemcpyHtoD({} bytes)", bytes));
    } else {
        cuda_check(api(), api().cuMemcpyHtoDAsync(device_pointer(dst), src, bytes, static_cast<CUstream>(stream)),
                   fmt::format("cuMemcpyHtoDAsync({} bytes)", bytes));
    }
}

void CudaDevice::copy_to_host(void* dst, const void* src, std::size_t bytes) {
    if (bytes == 0) return;
    const ScopedContext scope(*context_);
    cuda_check(api(), api().cuMemcpyDtoH(dst, device_pointer(src), bytes), fmt::format("cuMemcpyDtoH({} bytes)", bytes));
}

void CudaDevice::copy_on_device(void* dst, const void* src, std::size_t bytes) {
    if (bytes == 0) return;
    const ScopedContext scope(*context_);
    cuda_check(api(), api().cuMemcpyDtoD(device_pointer(dst), device_pointer(src), bytes),
               fmt::format("cuMemcpyDtoD({} bytes)", bytes));
}

void CudaDevice::fill_u32(void* dst, std::uint32_t value, std::size_t count, void* stream) {
    if (count == 0) return;
    MQAJIT_CHECK(reinterpret_cast<std::uintptr_t>(dst) % 4 == 0, "fill_u32 needs a 4-byte aligned address, got {}", dst);
    const ScopedContext scope(*context_);
    if (stream == nullptr) {
        cuda_check(api(), api().cuMemsetD32(device_pointer(dst), value, count), fmt::format("cuMemsetD32({} words)", count));
    } else {
        cuda_check(api(), api().cuMemsetD32Async(device_pointer(dst), value, count, static_cast<CUstream>(stream)),
                   fmt::format("cuMemsetD32Async({} words)", count));
    }
}

void CudaDevice::fill_bytes(void* dst, std::uint8_t value, std::size_t count, void* stream) {
    if (count == 0) return;
    const ScopedContext scope(*context_);
    if (stream == nullptr) {
        cuda_check(api(), api().cuMemsetD8(device_pointer(dst), value, count), fmt::format("cuMemsetD8({} bytes)", count));
    } else {
        cuda_check(api(), api().cuMemsetD8Async(device_pointer(dst), value, count, static_cast<CUstream>(stream)),
                   fmt::format("cuMemsetD8Async({} bytes)", count));
    }
}

void CudaDevice::synchronize(void* stream) {
    if (stream != nullptr) {
        cuda_check(api(), api().cuStreamSynchronize(static_cast<CUstream>(stream)), "cuStreamSynchronize");
        return;
    }
    const ScopedContext scope(*context_);
    cuda_check(api(), api().cuCtxSynchronize(), fmt::format("cuCtxSynchronize(device {})", ordinal()));
}

std::unique_ptr<DeviceStream> CudaDevice::create_stream() { return std::make_unique<CudaStream>(context_); }

std::unique_ptr<EventTimer> CudaDevice::create_timer() { return std::make_unique<CudaEventTimer>(context_); }

}  // namespace mqajit
