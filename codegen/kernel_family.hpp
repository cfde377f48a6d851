#pragma once
// A kernel family turns a Variant into source text and plans its launch. Adding a family touches
// variants/ (its grammar entry), codegen/ (template + generator) and tests; runtime/ and tools/ don't change.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "codegen/embedded_file.hpp"
#include "runtime/device.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

struct MqaLogitsParams;

namespace mqajit {

struct ProblemShape {
    int heads = 0;
    int head_dim = 0;
    std::int64_t seq_len = 0;     // S
    std::int64_t seq_len_kv = 0;  // N
    // NOTES: not a size but the one launch limit a caller sets (MqaLogitsOptions::num_sms): the
    // persistent families plan for at most this many multiprocessors; 0 means all of the device's.
    int num_sms = 0;
};

struct GeneratedKernel {
    std::string source;                      // a complete translation unit
    std::string kernel_name;                 // extern "C" name
    std::vector<std::string> options;        // family-specific compiler options
    std::span<const EmbeddedFile> headers;   // what the source #includes
};

struct LaunchPlan {
    LaunchConfig config;
    int num_kv_splits = 1;
    int num_q_blocks = 1;
    bool uses_tensor_maps = false;
};

class KernelFamily {
public:
    virtual ~KernelFamily() = default;
    virtual std::string name() const = 0;    // e.g. "sm90_mqa_logits", the template's file stem
    virtual MatrixOp op() const = 0;
    // The generated source for `variant` at (heads, head_dim) on `arch`.
    virtual GeneratedKernel generate(const Variant& variant, int heads, int head_dim, const Arch& arch) const = 0;
    // Dynamic shared memory one block of `variant` uses at (heads, head_dim).
    virtual std::size_t shared_bytes(const Variant& variant, int heads, int head_dim) const = 0;
    // Grid, block and shared memory for one call; fills the launch-time fields of `params`
    // (num_kv_splits, num_q_blocks, tensor maps through `device`).
    virtual LaunchPlan plan(const Variant& variant, const ProblemShape& shape, Device& device,
                            MqaLogitsParams& params) const = 0;
};

// The family that generates `variant` (by its matrix op); throws Error(unsupported) if none.
const KernelFamily& family_for(const Variant& variant);

}  // namespace mqajit
