#pragma once
// Programmatic dependent launch (sm_90+). A kernel launched with the runtime's PDL attribute
// (LaunchConfig::programmatic_dependent_launch) may start while the kernel before it on the stream
// is still running; every mqajit kernel therefore waits for that kernel's completion and memory
// before its first global read or write. Launched without the attribute, or compiled for anything
// older than sm_90, both helpers are no-ops (the AMD kernels do not use them).
//   grid_dependency_wait():       before touching global memory (kernel parameters are not memory)
//   grid_dependents_may_launch(): lets the next kernel on the stream start its launch now; only in
//                                 persistent kernels whose whole grid is resident at once, so a
//                                 dependent's blocks never take a slot one of ours still needs

#if defined(__CUDACC__)
namespace mqa_pdl {

__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void grid_dependents_may_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

}  // namespace mqa_pdl
#endif  // __CUDACC__
