#pragma once
// Runs the block-level device code of the mqa_topk templates on the CPU: one std::thread per CUDA
// thread of one block, __syncthreads as a barrier of the block, warp shuffles as exchanges through
// a barrier of the warp, shared-memory atomics as std::atomic_ref. Enough of CUDA for code that
// keeps to block-uniform control flow around its barriers (as those templates do), so that their
// logic is tested on machines without a GPU; the GPU tests run the same code for real.
// Include it before the template.

#include <algorithm>
#include <atomic>
#include <barrier>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#define __device__
#define __host__
#define __forceinline__

struct EmulatedDim3 {
    unsigned x = 0, y = 0, z = 0;
};
// Shared memory: one static per declaration (the emulator runs one block at a time).
#define __shared__ static
struct uint4 {
    unsigned x, y, z, w;
};
struct int2 {
    int x, y;
};
inline int2 make_int2(int x, int y) { return int2{x, y}; }

inline thread_local EmulatedDim3 threadIdx;
inline EmulatedDim3 blockIdx, blockDim{1, 1, 1}, gridDim{1, 1, 1};

namespace cuda_emulator {

struct Block {
    explicit Block(int threads)
        : block_barrier(threads), warp_slots(static_cast<std::size_t>(threads)), flag(0) {
        for (int w = 0; w < threads / 32; ++w) warp_barriers.push_back(std::make_unique<std::barrier<>>(32));
    }
    std::barrier<> block_barrier;
    std::vector<std::unique_ptr<std::barrier<>>> warp_barriers;
    std::vector<long long> warp_slots;
    int flag;
};

inline Block*& current_block() {
    static Block* block = nullptr;
    return block;
}

// Runs body() on `threads` threads (a multiple of 32) as one block.
inline void run_block(int threads, const std::function<void()>& body) {
    Block block(threads);
    current_block() = &block;
    blockDim = EmulatedDim3{static_cast<unsigned>(threads), 1, 1};
    std::vector<std::thread> workers;
    workers.reserve(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([t, &body] {
            threadIdx = EmulatedDim3{static_cast<unsigned>(t), 0, 0};
            body();
        });
    }
    for (std::thread& worker : workers) worker.join();
    current_block() = nullptr;
}

}  // namespace cuda_emulator

inline void __syncthreads() { cuda_emulator::current_block()->block_barrier.arrive_and_wait(); }

inline int __syncthreads_or(bool predicate) {
    cuda_emulator::Block& block = *cuda_emulator::current_block();
    block.block_barrier.arrive_and_wait();
    if (threadIdx.x == 0) block.flag = 0;
    block.block_barrier.arrive_and_wait();
    if (predicate) std::atomic_ref<int>(block.flag).store(1);
    block.block_barrier.arrive_and_wait();
    return block.flag;
}

namespace cuda_emulator {

// Every lane of the calling warp publishes `value`; then read(lanes), lanes being the warp's 32
// published values, between two barriers of the warp. What warp votes and shuffles are made of.
template <class Read>
auto exchange_in_warp(long long value, const Read& read) {
    Block& block = *current_block();
    const unsigned warp = threadIdx.x / 32;
    std::barrier<>& warp_barrier = *block.warp_barriers[warp];
    block.warp_slots[threadIdx.x] = value;
    warp_barrier.arrive_and_wait();
    const auto result = read(block.warp_slots.data() + warp * 32);
    warp_barrier.arrive_and_wait();
    return result;
}

}  // namespace cuda_emulator

inline void __syncwarp() { cuda_emulator::current_block()->warp_barriers[threadIdx.x / 32]->arrive_and_wait(); }

template <class T>
T __shfl_up_sync(unsigned, T value, int delta) {
    const unsigned lane = threadIdx.x % 32;
    return cuda_emulator::exchange_in_warp(static_cast<long long>(value), [&](const long long* lanes) {
        return lane >= static_cast<unsigned>(delta) ? static_cast<T>(lanes[lane - delta]) : value;
    });
}

template <class T>
T __shfl_sync(unsigned, T value, int source_lane) {
    return cuda_emulator::exchange_in_warp(static_cast<long long>(value), [&](const long long* lanes) {
        return static_cast<T>(lanes[static_cast<unsigned>(source_lane % 32)]);
    });
}

template <class T>
T __shfl_xor_sync(unsigned mask, T value, int lane_mask) {
    return __shfl_sync(mask, value, static_cast<int>(threadIdx.x % 32) ^ lane_mask);
}

inline unsigned __ballot_sync(unsigned, bool predicate) {
    return cuda_emulator::exchange_in_warp(predicate ? 1 : 0, [](const long long* lanes) {
        unsigned mask = 0;
        for (unsigned lane = 0; lane < 32; ++lane) mask |= lanes[lane] != 0 ? 1u << lane : 0u;
        return mask;
    });
}

inline int __any_sync(unsigned mask, bool predicate) { return __ballot_sync(mask, predicate) != 0u ? 1 : 0; }

inline unsigned __match_any_sync(unsigned, int value) {
    return cuda_emulator::exchange_in_warp(value, [value](const long long* lanes) {
        unsigned mask = 0;
        for (unsigned lane = 0; lane < 32; ++lane) mask |= lanes[lane] == value ? 1u << lane : 0u;
        return mask;
    });
}

inline int __ffs(unsigned value) { return value == 0 ? 0 : std::countr_zero(value) + 1; }
inline int __clz(int value) { return std::countl_zero(static_cast<unsigned>(value)); }
inline int atomicAdd(int* address, int value) { return std::atomic_ref<int>(*address).fetch_add(value); }
inline unsigned atomicOr(unsigned* address, unsigned value) {
    return std::atomic_ref<unsigned>(*address).fetch_or(value);
}
inline int __popc(unsigned value) { return std::popcount(value); }
inline float __int_as_float(int bits) { return std::bit_cast<float>(bits); }
inline float __int_as_float(unsigned bits) { return std::bit_cast<float>(bits); }
inline float __uint_as_float(unsigned bits) { return std::bit_cast<float>(bits); }
inline int __float_as_int(float value) { return std::bit_cast<int>(value); }
inline unsigned __float_as_uint(float value) { return std::bit_cast<unsigned>(value); }
inline int min(int a, int b) { return std::min(a, b); }
inline int max(int a, int b) { return std::max(a, b); }
using std::ceil;
