#pragma once
// mqa_common.cuh for the templates that nvcc, NVRTC, clang -x hip and hiprtc all compile (the
// reference kernels, the gfx9 families), plus the one device helper whose spelling differs.

#if defined(__HIP__)
#include "hip_minimal.cuh"
// NOTES: mqa_common.cuh's helpers are plain inline functions outside nvcc; this makes them callable
// from HIP device code too, without touching the shared header.
#pragma clang force_cuda_host_device begin
#endif
#include "mqa_common.cuh"
#if defined(__HIP__)
#pragma clang force_cuda_host_device end
#endif

#if defined(__CUDACC__) || defined(__HIP_DEVICE_COMPILE__)
namespace mqa_device {

#if defined(__HIP__)
__device__ __forceinline__ float negative_infinity() { return hip_minimal::negative_infinity(); }
#else
__device__ __forceinline__ float negative_infinity() { return mqa::negative_infinity(); }
#endif

}  // namespace mqa_device
#endif  // __CUDACC__ || __HIP_DEVICE_COMPILE__
