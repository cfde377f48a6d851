#pragma once
// The floor a shape's time is compared against: for prefill the larger of its FLOPs at the
// measured fp8 GEMM rate and its output bytes at the measured copy rate, for decode its bytes at
// the copy rate (both rates measured on one H200, 2026-11-30).

#include <algorithm>
#include <cstdint>

namespace mqajit::tools {

inline constexpr double kH200Fp8FlopsPerSecond = 1309e12;  // torch._scaled_mm, 8192^3
inline constexpr double kH200CopyBytesPerSecond = 4296e9;  // device copy, read + write

inline double floor_us(double flops, std::int64_t seq_len, std::int64_t seq_len_kv) {
    const double compute_us = flops / kH200Fp8FlopsPerSecond * 1e6;
    const double output_us = static_cast<double>(seq_len) * seq_len_kv * 4 / kH200CopyBytesPerSecond * 1e6;
    return std::max(compute_us, output_us);
}

// The decode op's floor: the bytes it must move (paged_floor_bytes) at the measured copy rate.
inline double bytes_floor_us(double bytes) { return bytes / kH200CopyBytesPerSecond * 1e6; }

}  // namespace mqajit::tools
