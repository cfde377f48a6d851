#pragma once
// The few HIP device-side names the gfx9 kernels use, for clang -x hip -nogpuinc -nogpulib and hiprtc.
// NOTES: Debian's HIP 5.2 headers do not know gfx942/gfx950, and a code object needs none of the
// runtime's host API, so the device environment is spelled out here with clang builtins only.

#if defined(__HIP_DEVICE_COMPILE__)

// NOTES: hiprtc defines these names itself before the source is read (clang -x hip with
// -nogpuinc does not), so each is defined only where it is missing.
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#ifndef __device__
#define __device__ __attribute__((device))
#endif
#ifndef __host__
#define __host__ __attribute__((host))
#endif
#ifndef __shared__
#define __shared__ __attribute__((shared))
#endif
#ifndef __forceinline__
#define __forceinline__ inline __attribute__((always_inline))
#endif

namespace hip_minimal {

__device__ __forceinline__ int thread_x() { return static_cast<int>(__builtin_amdgcn_workitem_id_x()); }
__device__ __forceinline__ int block_x() { return static_cast<int>(__builtin_amdgcn_workgroup_id_x()); }
__device__ __forceinline__ int block_y() { return static_cast<int>(__builtin_amdgcn_workgroup_id_y()); }
// Blocks along y in the grid (gridDim.y).
__device__ __forceinline__ int grid_blocks_y() {
    return static_cast<int>(__builtin_amdgcn_grid_size_y() / __builtin_amdgcn_workgroup_size_y());
}

// NOTES: s_barrier alone orders execution, not memory; the release/acquire fences around it make
// every LDS and global write before the barrier visible to the whole workgroup after it.
__device__ __forceinline__ void sync_threads() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// x from lane (this lane ^ mask) of the same wave of 64.
__device__ __forceinline__ float shuffle_xor(float x, int mask) {
    const int lane = static_cast<int>(__builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)));
    return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute((lane ^ mask) << 2, __builtin_bit_cast(int, x)));
}

__device__ __forceinline__ float negative_infinity() { return -__builtin_inff(); }

}  // namespace hip_minimal

#endif  // __HIP_DEVICE_COMPILE__
