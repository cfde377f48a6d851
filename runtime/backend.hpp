#pragma once
// One vendor's runtime: its compilers (no GPU needed), its pre-built kernels and, when a driver
// answers, its devices. Dispatch, the tools, the Python binding and the tests reach a vendor only
// through this interface; backend_registry.cpp is the only file that names every backend.

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "codegen/kernel_family.hpp"
#include "runtime/compiler.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_cache.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace mqajit {

struct DriverStatus {
    bool available = false;
    std::string message;  // one line: "CUDA driver 580.159 with 1 device" or why there is none
};

// A kernel linked into the library at build time.
struct PrebuiltKernel {
    std::span<const char> binary;  // a fatbin (NVIDIA) or a code object (AMD)
    std::string kernel_name;
};

// The baseline for one (arch, heads, head_dim): the variant its family plans the launch of, and the kernel.
struct BaselineKernel {
    Variant variant;
    PrebuiltKernel kernel;
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;    // "cuda", "hip"
    virtual Vendor vendor() const = 0;
    // The compiler that needs no GPU nor driver: what `mqajit aot` builds with. Throws
    // Error(not_found) naming what it could not find.
    virtual const Compiler& compiler() const = 0;
    // What kernels are compiled with at run time on this vendor's devices (NVRTC; hiprtc), the
    // compiler a tuned row records. Throws Error(not_found) when it is missing.
    virtual const Compiler& runtime_compiler() const = 0;
    virtual DriverStatus driver_status() const = 0;
    virtual int device_count() const = 0;    // 0 when no driver
    // The device `ordinal` (one object per ordinal, shared); throws Error(not_found) without a driver
    // and Error(invalid_argument) for an ordinal out of range.
    virtual std::shared_ptr<Device> open_device(int ordinal) = 0;
    // The device the calling thread's current context belongs to; with no current context, device
    // 0's is made current.
    virtual std::shared_ptr<Device> current_device() = 0;

    // The generated kernel of `variant` at (heads, head_dim), loaded on `device` through `cache`:
    // from memory, from the disk cache (an ahead-of-time build included), or compiled now. Throws
    // what the compiler or the device threw; dispatch falls back to the baseline on that.
    virtual std::shared_ptr<LoadedKernel> generated_kernel(KernelCache& cache, Device& device, const Variant& variant,
                                                           int heads, int head_dim) const = 0;
    // The pre-built baseline that serves (heads, head_dim) on `arch`. Throws Error(unsupported)
    // saying why this build has none.
    virtual BaselineKernel baseline(const Arch& arch, int heads, int head_dim) const = 0;
    // The pre-built reference kernel for `arch` (codegen/baseline.hpp: kReferenceKernelName and its
    // launch). Throws Error(unsupported) saying why this build has none.
    virtual PrebuiltKernel reference(const Arch& arch) const = 0;
    // The paged_mqa_logits (decode) counterparts: the pre-built baseline for a call's shape and the
    // reference kernel (kPagedReferenceKernelName). Throw Error(unsupported) saying why there is none.
    virtual BaselineKernel paged_baseline(const Arch& arch, const PagedProblemShape& shape) const = 0;
    virtual PrebuiltKernel paged_reference(const Arch& arch) const = 0;
    // A pre-built mqa_topk kernel by name (the select kernel, kTopkSelectKernelName, and the fused
    // path's helpers, codegen/topk_fused.hpp). Throws Error(unsupported) saying why there is none.
    virtual PrebuiltKernel topk_kernel(const Arch& arch, const char* kernel_name) const = 0;
};

// The backend that serves an arch ("sm_90a" -> cuda, "gfx950" -> hip); throws Error(unsupported)
// when this build has none for its vendor (CUDA left out with MQAJIT_WITH_CUDA=OFF).
Backend& backend_for(const Arch& arch);
Backend& backend_for(Vendor vendor);
// Every backend this build has.
std::vector<Backend*> all_backends();
// The backend whose driver sees a GPU, CUDA first; with none, the first backend this build has
// (whose errors say why there is no device).
Backend& live_backend();
// Whether any backend's driver sees a GPU, and which (one line); otherwise every backend's reason.
DriverStatus live_driver_status();

}  // namespace mqajit
