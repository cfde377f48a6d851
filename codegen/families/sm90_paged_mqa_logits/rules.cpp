// The sm90_paged_mqa_logits (decode) family's rules; see rules.hpp.

#include "codegen/families/sm90_paged_mqa_logits/rules.hpp"

#include <algorithm>
#include <cstdint>

namespace mqajit {
namespace {

using variant_rules::contains;
using variant_rules::supported;
using variant_rules::unsupported;

constexpr int kMaxAccumulatorRegisters = 128;
constexpr std::int64_t kMaxSharedMemoryBytes = 227 * 1024;
constexpr int kThreadsPerWarpgroup = 128;
constexpr int kRegistersPerSm = 65536;

// Registers each math thread holds, as PagedConfig splits them with one CTA per SM: the entry
// share of every thread, and with two or more math warpgroups the producer's share moved to them.
int math_thread_registers(int math_groups) {
    const int threads = (math_groups + 1) * kThreadsPerWarpgroup;
    const int entry = kRegistersPerSm / threads / 8 * 8;
    const int producer = entry >= 160 ? 40 : 24;
    const int reallocated = std::min(232, (entry * (math_groups + 1) - producer) / math_groups / 8 * 8);
    return math_groups > 1 && entry < 232 ? reallocated : std::min(255, entry);
}

}  // namespace

std::int64_t pwgmma_shared_bytes(const Variant& v, int head_dim) {
    constexpr std::int64_t kQBuffers = 2;
    const std::int64_t stages = v.stages;
    const std::int64_t key_stages = stages * v.bkv * head_dim;
    const std::int64_t q_buffers = kQBuffers * std::int64_t{v.n} * head_dim;
    const std::int64_t scales = stages * v.bkv * 4;
    const std::int64_t barriers = 8 * (2 * stages + 2 * kQBuffers);
    const std::int64_t schedule = 4 * ((std::int64_t{v.warps} + 1) * kThreadsPerWarpgroup + 4);
    return 1024 + key_stages + q_buffers + scales + barriers + schedule;
}

Support pwgmma_check(const Arch& arch, int heads, int head_dim, const Variant& v) {
    if (arch.vendor != Vendor::nvidia || arch.number != 90 || !arch.arch_specific)
        return unsupported("paged_mqa_logits kernels (pwgmma) need sm_90a; this device is {}", arch.name);
    if (v.op != MatrixOp::pwgmma)
        return unsupported("paged_mqa_logits runs pwgmma variants; {} is an mqa_logits ({}) kernel", v.name(),
                           to_string(v.op));
    if (Support size = variant_rules::check_problem_size("pwgmma", heads, {32, 64}, head_dim, {64, 128}); !size)
        return size;
    if (v.m != 64 || v.k != 32) return unsupported("pwgmma runs the fp8 shape 64x<N>x32; got M={} K={}", v.m, v.k);
    if (v.rows < 1 || v.rows > 4) return unsupported("r (tokens per request, next_n) must be 1 to 4; got {}", v.rows);
    if (v.n != v.rows * heads)
        return unsupported("N={} must equal r x heads = {} x {} = {}", v.n, v.rows, heads, v.rows * heads);
    if (v.n < 32 || v.n > 256 || v.n % 32 != 0)
        return unsupported("N={} must be a multiple of 32 from 32 to 256 (the wgmma N of all tokens and heads)", v.n);
    if (!contains({64, 128}, v.bkv)) return unsupported("bkv (keys per stage) must be 64 or 128; got {}", v.bkv);
    if (v.warps < 1 || v.warps > 3) return unsupported("w (math warpgroups) must be 1..3; got {}", v.warps);
    if (v.stages == 0) return unsupported("pwgmma needs _lds<S> (pipeline stages, 2..16)");
    if (v.stages < 2 || v.stages > 16) return unsupported("lds (pipeline stages) must be 2..16; got {}", v.stages);
    // NOTES: as in the prefill wgmma family, each stage must always serve the same math warpgroup,
    // which the mbarrier parity waits need.
    if (v.stages % v.warps != 0) {
        return unsupported("lds {} must be a multiple of w {} (each stage serves one math warpgroup)", v.stages,
                           v.warps);
    }
    const int accumulators = v.bkv / 64 * v.n / 2;
    if (accumulators > kMaxAccumulatorRegisters) {
        return unsupported("accumulators take (bkv/64) x N/2 = {} registers per thread, over the {} limit; lower "
                           "bkv", accumulators, kMaxAccumulatorRegisters);
    }
    // NOTES: PagedConfig's static_assert: the accumulators, the weights of N/4 (token, head) pairs
    // and 24 more must fit what the register split leaves a math thread.
    const int needed = accumulators + v.n / 4 + 24;
    if (needed > math_thread_registers(v.warps)) {
        return unsupported("a math thread needs {} registers (accumulators {}, weights {}, 24 more), over the {} that "
                           "w{} leaves it; use fewer math warpgroups", needed, accumulators, v.n / 4,
                           math_thread_registers(v.warps), v.warps);
    }
    const std::int64_t shared = pwgmma_shared_bytes(v, head_dim);
    if (shared > kMaxSharedMemoryBytes) {
        return unsupported("shared memory {} B exceeds {} B (227 KiB on sm_90a); lower lds", shared,
                           kMaxSharedMemoryBytes);
    }
    return supported();
}

Support paged_variant_support(const Arch& arch, const PagedProblem& problem, const Variant& v) {
    if (Support rules = pwgmma_check(arch, problem.heads, problem.head_dim, v); !rules) return rules;
    if (v.rows != problem.next_n) return unsupported("r={} must equal the call's next_n, {}", v.rows, problem.next_n);
    if (v.bkv != problem.block_kv)
        return unsupported("bkv={} must equal the cache's block_kv, {} (one cache block per stage)", v.bkv,
                           problem.block_kv);
    return supported();
}

}  // namespace mqajit
