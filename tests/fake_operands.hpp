#pragma once
// The operands of a valid mqa_logits call (S=4, H=32, D=128, N=100) at distinct, aligned fake
// device addresses: argument checks never dereference them, so they are tested without a GPU.

#include <cstdint>

#include "mqajit/tensor.hpp"

namespace mqajit::testing {

inline void* fake_device_address(std::uintptr_t slot) { return reinterpret_cast<void*>(0x100000 + slot * 0x10000); }

struct FakeMqaOperands {
    TensorView q = TensorView::contiguous(fake_device_address(1), DType::float8_e4m3, {4, 32, 128});
    TensorView kv = TensorView::contiguous(fake_device_address(2), DType::float8_e4m3, {100, 128});
    TensorView kv_scales = TensorView::contiguous(fake_device_address(3), DType::float32, {100});
    TensorView weights = TensorView::contiguous(fake_device_address(4), DType::float32, {4, 32});
    TensorView cu_starts = TensorView::contiguous(fake_device_address(5), DType::int32, {4});
    TensorView cu_ends = TensorView::contiguous(fake_device_address(6), DType::int32, {4});
};

}  // namespace mqajit::testing
