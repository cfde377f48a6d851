#pragma once
// A kernel variant: one configuration of one kernel family, named by a string that runs through
// everything (codegen input, cache tag, log field, tuning-table value). Grammar: docs/variants.md.
//
//   <op><M>x<N>x<K>_bkv<B>_r<R>_w<W>[_lds<S>]
//   op = wgmma (sm_90a), mma (sm_80+ mma.sync), mfma (gfx942/gfx950): mqa_logits (prefill);
//        pwgmma (sm_90a, "paged wgmma"), pmfma (gfx942/gfx950, "paged mfma"): paged_mqa_logits (decode);
//        twgmma (sm_90a, "top-k wgmma"): mqa_topk's fused kernel

#include <compare>
#include <string>
#include <string_view>

namespace mqajit {

enum class MatrixOp { wgmma, mma, mfma, pwgmma, pmfma, twgmma };

std::string_view to_string(MatrixOp op);

struct Variant {
    MatrixOp op = MatrixOp::mma;
    int m = 0, n = 0, k = 0;  // the matrix instruction's shape
    int bkv = 0;              // KV rows per tile
    int rows = 0;             // query rows: per block (NVIDIA) or per wave (AMD)
    int warps = 0;            // NVIDIA mma: warps; wgmma: math warpgroups; AMD: waves of 64 lanes
    int stages = 0;           // shared-memory / LDS buffers for the KV tile; 0 = "_lds" absent

    // Throws mqajit::Error(invalid_argument) naming the bad field and what it expects.
    static Variant parse(std::string_view name);
    std::string name() const;  // parse(v.name()) == v, and parse(s).name() == s for valid s

    auto operator<=>(const Variant&) const = default;
};

}  // namespace mqajit
