#pragma once
// A kernel family turns a Variant into source text and plans its launch from plain numbers. Each
// family lives in its own folder, codegen/families/<name>/ (rules, resource math, generator and
// plan, templates), and is named once, in codegen/family_registry.cpp; runtime/ and tools/ don't
// change when one is added (docs/variants.md, "Adding a family").

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/embedded_file.hpp"
#include "codegen/family_rules.hpp"
#include "codegen/launch_plan.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

struct MqaLogitsParams;
struct PagedMqaLogitsParams;

namespace mqajit {

// The operator a family's kernels compute. Families of different operators may share a matrix
// op (and so variant names); the registry keeps them apart by this.
enum class KernelOp { mqa_logits, paged_mqa_logits, mqa_topk };

std::string_view to_string(KernelOp op);

// The problem of one mqa_logits call.
struct ProblemShape {
    int heads = 0;
    int head_dim = 0;
    std::int64_t seq_len = 0;     // S
    std::int64_t seq_len_kv = 0;  // N
    // NOTES: not a size but the one launch limit a caller sets (MqaLogitsOptions::num_sms): the
    // persistent families plan for at most this many multiprocessors; 0 means all of the device's.
    int num_sms = 0;
    // The logits' element type (false: float32). No family plans by it; the tuning lookup keys on
    // it, since the store it changes can change the best variant.
    bool logits_bf16 = false;
};

// The problem of one paged_mqa_logits (decode) call, as far as the host knows it: the context
// lengths and block indices are in device memory.
struct PagedProblemShape {
    int batch = 0;            // B
    int next_n = 0;           // query tokens per request
    int heads = 0;            // H
    int head_dim = 0;         // D
    int block_kv = 0;         // tokens per cache block
    int max_context_len = 0;  // logits columns
    std::int64_t num_cache_blocks = 0;
    bool context_lens_2d = false;
    int num_sms = 0;  // SMs the call may use; 0: all

    // The most cache blocks the requests can need, known without their context lengths: each sees
    // at most max_context_len keys, and a clean request that sees none still gets one block.
    std::int64_t cache_blocks_bound() const {
        return std::int64_t{batch} * std::max<std::int64_t>(1, (std::int64_t{max_context_len} + block_kv - 1) / block_kv);
    }
};

struct GeneratedKernel {
    std::string source;                      // a complete translation unit
    std::string kernel_name;                 // extern "C" name
    std::vector<std::string> options;        // family-specific compiler options
    std::span<const EmbeddedFile> headers;   // the templates the source includes, directly or not
};

class KernelFamily {
public:
    virtual ~KernelFamily() = default;
    // The family's one name: its folder codegen/families/<name>/, its main template <name>.cuh
    // and its kernel-cache tag, e.g. "sm90_mqa_logits".
    virtual std::string name() const = 0;
    virtual KernelOp kernel_op() const = 0;
    virtual MatrixOp op() const = 0;  // the matrix op of the variants it generates
    // Which archs it serves, which variants it registers, whether one can run (rules.cpp).
    virtual const FamilyRules& rules() const = 0;
    // The generated source for `variant` at (heads, head_dim) on `arch`. Throws Error(unsupported)
    // with the rules' reason when the variant cannot run there.
    virtual GeneratedKernel generate(const Variant& variant, int heads, int head_dim, const Arch& arch) const = 0;
    // Dynamic shared memory (LDS on AMD) one block of `variant` uses at (heads, head_dim): the one
    // function the rules check and the launch asks for.
    virtual std::size_t shared_bytes(const Variant& variant, int heads, int head_dim) const = 0;
};

// A family of the mqa_logits operator: it plans launches whose argument is MqaLogitsParams.
class MqaLogitsFamily : public KernelFamily {
public:
    KernelOp kernel_op() const final { return KernelOp::mqa_logits; }
    // Grid, block, shared memory, the argument's launch-time fields (num_kv_splits, num_q_blocks)
    // and the tensor maps to encode, for one call on a device with `limits`; `params` gives the
    // operands' addresses and strides and, in num_kv_splits, a requested split count (0: the
    // family's own rule). Pure: it reads numbers and writes nothing. Throws Error(unsupported) when
    // the variant needs more than the device has, Error(invalid_argument) for operands it can't read.
    virtual LaunchPlan plan(const Variant& variant, const ProblemShape& shape, const DeviceLimits& limits,
                            const MqaLogitsParams& params) const = 0;
};

// A family of mqa_topk's fused kernel: the mqa_logits argument (with its topk_* fields set) and an
// mqa_logits-shaped launch plan, but a kernel that keeps per-row candidates instead of logits.
class MqaTopkFamily : public KernelFamily {
public:
    KernelOp kernel_op() const final { return KernelOp::mqa_topk; }
    // As MqaLogitsFamily::plan.
    virtual LaunchPlan plan(const Variant& variant, const ProblemShape& shape, const DeviceLimits& limits,
                            const MqaLogitsParams& params) const = 0;
    // The mqa_logits variant whose values this one's candidates carry (same kernel, other epilogue).
    virtual Variant logits_twin(const Variant& variant) const = 0;
    // This family's variant that computes `logits_variant`'s values; nullopt when it has none.
    virtual std::optional<Variant> topk_twin(const Variant& logits_variant) const = 0;
};

// A family of the paged_mqa_logits operator: it plans launches whose argument is PagedMqaLogitsParams.
class PagedMqaLogitsFamily : public KernelFamily {
public:
    KernelOp kernel_op() const final { return KernelOp::paged_mqa_logits; }
    // Whether `variant` computes this call's shape (its next_n and block_kv), beyond what the rules
    // check for (heads, head_dim); the reason says what would.
    virtual Support fits(const Variant& variant, const PagedProblemShape& shape) const = 0;
    // Grid, block, shared memory and the tensor maps to encode for one call on a device with
    // `limits`; `params` gives the operands' addresses and strides. Pure, like MqaLogitsFamily::plan.
    virtual LaunchPlan plan(const Variant& variant, const PagedProblemShape& shape, const DeviceLimits& limits,
                            const PagedMqaLogitsParams& params) const = 0;
};

}  // namespace mqajit
