#pragma once
// The decode half of the indexer, over a paged KV cache: for request b, its token t (output row
// r = b * next_n + t) and each key j it sees,
//   logits[r, j] = scale(j) * sum_h weights[r, h] * relu(dot(q[b, t, h, :], key(j)))
// where key j of request b is slot j % block_kv of cache block block_table[b, j / block_kv].
// Token t sees keys j < context_lens[b] - next_n + t + 1 (or j < context_lens[b, t] with 2-D
// lengths); the other columns of [0, max_context_len) are -inf with clean_logits and untouched
// otherwise. docs/paged_mqa_logits.md has the whole contract.

#include <string>

#include "mqajit/export.hpp"
#include "mqajit/mqa_logits.hpp"  // DispatchReport
#include "mqajit/tensor.hpp"

namespace mqajit {

struct PagedMqaLogitsOptions {
    bool clean_logits = false;
    void* stream = nullptr;  // a CUstream or hipStream_t (nullptr: the legacy default stream)
    // Empty: the decode tuning table decides. "baseline": the pre-built kernel. Otherwise a pwgmma
    // (sm_90a) or pmfma (gfx942/gfx950) variant name, which must fit the call (an mqajit::Error says
    // why not).
    std::string variant{};
    // Multiprocessors the call may use. 0: all of them; a count above the device's means all.
    int num_sms = 0;
    DispatchReport* report = nullptr;
    // Programmatic dependent launch (DeepGEMM's set_pdl): on sm_90+ the kernel may start while the
    // kernel before it on the stream finishes, and waits for it before it touches memory; it
    // also lets the next kernel start early. Only a next kernel launched the same way (and waiting
    // likewise) overlaps; others start after the call as always. Ignored elsewhere.
    bool pdl = false;
};

// q:            float8_e4m3 [B, next_n, H, D], dense within a request (strides [b_stride, H*D, D, 1])
// kv_cache:     uint8 [num_blocks, block_kv, 1, D + 4]: each block holds block_kv x D e4m3 keys,
//               token-major, then block_kv fp32 scales (DeepGEMM's layout)
// weights:      float32 [B * next_n, H], h dense
// context_lens: int32 [B] or [B, next_n], dense
// block_table:  int32 [B, max_blocks], blocks dense
// logits:       float32 [B * next_n, max_context_len], columns dense; max_context_len is its width
// All pointers are device memory of the current context; block indices and context lengths are
// read on the device only, so they are the caller's duty (in range, lengths <= max_context_len);
// logits overlapping an input is refused. Every size is at least 1, max_context_len at most
// 2^31 - 256; the stride of a size-1 dimension is ignored.
// Asynchronous on `stream`, never synchronizes, allocates nothing after the first call for a
// shape, and takes no host-side metadata: one launch, graph-capturable with any lengths.
// Bad input raises mqajit::Error (invalid_argument) before anything is launched; a device with no
// paged kernels (anything but sm_90a, gfx942 and gfx950; the AMD ones have not run on hardware)
// raises Error(unsupported).
MQAJIT_API void paged_mqa_logits(const TensorView& q, const TensorView& kv_cache, const TensorView& weights,
                      const TensorView& context_lens, const TensorView& block_table, const TensorView& logits,
                      const PagedMqaLogitsOptions& options = {});

// The same operator computed by an obviously correct kernel (fp32, one thread per output, keys
// found through the block table one by one): slow, for checking results.
MQAJIT_API void paged_mqa_logits_reference(const TensorView& q, const TensorView& kv_cache, const TensorView& weights,
                                const TensorView& context_lens, const TensorView& block_table,
                                const TensorView& logits, bool clean_logits = false, void* stream = nullptr);

}  // namespace mqajit
