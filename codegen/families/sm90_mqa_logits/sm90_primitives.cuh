#pragma once
// Hopper (sm_90a) building blocks as inline PTX: mbarriers, TMA tile loads, wgmma fences and
// shared-memory matrix descriptors, register reallocation. No standard headers (NVRTC speed).

namespace mqa_sm90 {

typedef unsigned int u32;
typedef unsigned long long u64;

__device__ __forceinline__ u32 shared_address(const void* pointer) {
    return static_cast<u32>(__cvta_generic_to_shared(pointer));
}

// A value every lane of the warp holds alike, read from lane 0 when kUniform so that ptxas knows it
// is warp-uniform and may keep what derives from it in uniform registers.
template <bool kUniform>
__device__ __forceinline__ int warp_uniform(int value) {
    if constexpr (kUniform) return __shfl_sync(0xffffffffu, value, 0);
    return value;
}

// ---- mbarrier -------------------------------------------------------------------------------

__device__ __forceinline__ void barrier_init(u64* barrier, u32 arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(barrier)), "r"(arrivals));
}

// NOTES: makes the initialised barriers visible to the TMA unit (async proxy) before first use.
__device__ __forceinline__ void fence_barrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// The barriers of a pipeline of `stages` KV stages and `q_buffers` Q buffers (a layout with
// kv_full, kv_empty, q_full and q_empty): each full barrier takes the producer's one arrival, a KV
// stage's empty barrier one per warp of the warpgroup that consumes it, a Q buffer's empty
// barrier one per warp of every math warpgroup. One thread calls it.
template <class Layout>
__device__ __forceinline__ void init_pipeline_barriers(const Layout& smem, int stages, int q_buffers, int math_groups) {
    for (int s = 0; s < stages; ++s) {
        barrier_init(smem.kv_full + s, 1);
        barrier_init(smem.kv_empty + s, 4);
    }
    for (int b = 0; b < q_buffers; ++b) {
        barrier_init(smem.q_full + b, 1);
        barrier_init(smem.q_empty + b, 4 * math_groups);
    }
    fence_barrier_init();
}

__device__ __forceinline__ void barrier_arrive(u64* barrier) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(barrier)) : "memory");
}

__device__ __forceinline__ void barrier_arrive_expect_bytes(u64* barrier, u32 bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(barrier)),
                 "r"(bytes)
                 : "memory");
}

// Blocks until the barrier's phase with the given parity has completed.
__device__ __forceinline__ void barrier_wait(u64* barrier, u32 parity) {
    asm volatile(
        "{\n"
        ".reg .pred done;\n"
        "WAIT_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT_%=;\n"
        "}\n" ::"r"(shared_address(barrier)),
        "r"(parity)
        : "memory");
}

// ---- TMA ------------------------------------------------------------------------------------

// Brings the 128-byte line holding `address` into L2 (no register, no wait).
__device__ __forceinline__ void prefetch_l2(const void* address) {
    asm volatile("prefetch.global.L2 [%0];" ::"l"(address));
}

__device__ __forceinline__ void prefetch_tensor_map(const void* tensor_map) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(tensor_map) : "memory");
}

__device__ __forceinline__ void tma_load_2d(void* destination, const void* tensor_map, u64* barrier, int x, int y) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::
            "r"(shared_address(destination)),
        "l"(tensor_map), "r"(x), "r"(y), "r"(shared_address(barrier))
        : "memory");
}

__device__ __forceinline__ void tma_load_3d(void* destination, const void* tensor_map, u64* barrier, int x, int y,
                                            int z) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::
            "r"(shared_address(destination)),
        "l"(tensor_map), "r"(x), "r"(y), "r"(z), "r"(shared_address(barrier))
        : "memory");
}

// An L2 policy for data read once: its lines are the first to go when L2 needs room, so a stream
// of them replaces its own lines rather than whatever else L2 holds (dirty lines included, whose
// write-back would share the DRAM with the stream).
__device__ __forceinline__ u64 l2_evict_first_policy() {
    u64 policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    return policy;
}

__device__ __forceinline__ void tma_load_2d_hinted(void* destination, const void* tensor_map, u64* barrier, int x, int y,
                                                   u64 policy) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3}], "
        "[%4], %5;" ::"r"(shared_address(destination)),
        "l"(tensor_map), "r"(x), "r"(y), "r"(shared_address(barrier)), "l"(policy)
        : "memory");
}

__device__ __forceinline__ void tma_load_3d_hinted(void* destination, const void* tensor_map, u64* barrier, int x, int y,
                                                   int z, u64 policy) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3, "
        "%4}], [%5], %6;" ::"r"(shared_address(destination)),
        "l"(tensor_map), "r"(x), "r"(y), "r"(z), "r"(shared_address(barrier)), "l"(policy)
        : "memory");
}

// ---- wgmma ----------------------------------------------------------------------------------

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

// Keeps the compiler from moving accumulator reads across wgmma_wait.
__device__ __forceinline__ void fence_operand(float& value) { asm volatile("" : "+f"(value)::"memory"); }

// The high word of a matrix_descriptor: it depends only on the row length.
template <int kRowBytes>
__device__ __forceinline__ constexpr u32 descriptor_high() {
    static_assert(kRowBytes == 64 || kRowBytes == 128, "rows of 64 or 128 bytes");
    constexpr u32 kLayout = kRowBytes == 128 ? 1u : 2u;  // 1: 128B swizzle, 2: 64B swizzle
    constexpr u32 kAtomBytes = 8u * kRowBytes;           // distance between 8-row groups
    return (kAtomBytes >> 4) | (kLayout << 30);
}

// A K-major operand tile in shared memory whose rows are `kRowBytes` (64 or 128) bytes long,
// written by TMA with the matching swizzle (64B or 128B). Eight rows form one swizzle atom.
template <int kRowBytes>
__device__ __forceinline__ u64 matrix_descriptor(const void* tile_start) {
    u64 descriptor = 0;
    descriptor |= static_cast<u64>((shared_address(tile_start) & 0x3FFFF) >> 4);
    descriptor |= static_cast<u64>(1) << 16;  // leading byte offset: unused for swizzled K-major
    descriptor |= static_cast<u64>(descriptor_high<kRowBytes>()) << 32;
    return descriptor;
}

// matrix_descriptor's two words apart: the low word holds the start address (in 16-byte units,
// bits 0-13), so a tile `bytes` further on is `low + bytes / 16` as long as it stays inside the
// 256 KiB the field can address.
template <int kRowBytes>
__device__ __forceinline__ u32 descriptor_low(const void* tile_start) {
    return static_cast<u32>(matrix_descriptor<kRowBytes>(tile_start));
}
template <int kRowBytes>
__device__ __forceinline__ u64 descriptor_from_low(u32 low) {
    u64 descriptor;
    asm("mov.b64 %0, {%1, %2};" : "=l"(descriptor) : "r"(low), "r"(descriptor_high<kRowBytes>()));
    return descriptor;
}

// ---- registers ------------------------------------------------------------------------------

template <int kRegisters>
__device__ __forceinline__ void registers_release() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegisters));
}
template <int kRegisters>
__device__ __forceinline__ void registers_claim() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegisters));
}

}  // namespace mqa_sm90
