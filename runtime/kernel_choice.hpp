#pragma once
// Which mqa_logits kernel serves a shape on an arch and SM count, and why: the caller's request,
// else the tuned row the lookup finds, else the baseline. Host-only (no device, no device memory),
// so the dispatcher and the explanations (mqa_topk's) take the same decision.

#include <optional>
#include <string>
#include <string_view>

#include "codegen/kernel_family.hpp"
#include "tuning_db/shape_keys.hpp"
#include "variants/arch.hpp"
#include "variants/variant.hpp"

namespace mqajit {

class TuningDb;

struct KernelChoice {
    std::optional<Variant> variant;  // nullopt: the baseline
    std::string reason;
};

// The mqa_logits table's key of a call.
ShapeKey logits_tuning_key(const Arch& arch, int multiprocessors, const ProblemShape& shape, bool clean_logits);

// `requested`: "" (the choice of `database`'s table), "baseline" or a variant name. A requested
// variant that cannot run here throws Error(unsupported) naming `device` ("this NVIDIA H200
// (sm_90a)"); a tuned one that cannot means the baseline, with the reason.
KernelChoice choose_logits_kernel(const TuningDb& database, const Arch& arch, int multiprocessors,
                                  const ProblemShape& shape, bool clean_logits, const std::string& requested,
                                  std::string_view device);

}  // namespace mqajit
