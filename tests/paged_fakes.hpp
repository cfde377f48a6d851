#pragma once
// A decode kernel argument for plan() tests: addresses that are never dereferenced (16-byte aligned)
// and the strides of dense operands of `shape`.

#include <cstdint>

#include "codegen/kernel_family.hpp"
#include "codegen/templates/paged_mqa_logits_params.cuh"

namespace mqajit::testing {

inline PagedMqaLogitsParams fake_paged_params(const PagedProblemShape& shape) {
    PagedMqaLogitsParams p{};
    p.q = reinterpret_cast<const unsigned char*>(std::uintptr_t{0x100000});
    p.kv_cache = reinterpret_cast<const unsigned char*>(std::uintptr_t{0x4000000});
    p.q_stride_b = std::int64_t{shape.next_n} * shape.heads * shape.head_dim;
    p.cache_block_bytes = std::int64_t{shape.block_kv} * (shape.head_dim + 4);
    return p;
}

}  // namespace mqajit::testing
