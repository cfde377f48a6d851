#pragma once
// An mqa_topk problem on a device (the inputs of a HostProblem, the indices and the workspace), and
// the check the tools run on it: the expected keys of each row computed on the host from the
// logits of the kernel whose values the candidate selects by, compared exactly (the same set,
// ascending key order, -1 past the window), and a rerun compared bit for bit.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mqajit/mqa_topk.hpp"
#include "runtime/device.hpp"
#include "tools/common/device_problem.hpp"
#include "tools/common/problem.hpp"

namespace mqajit::tools {

class DeviceTopkProblem {
public:
    // The workspace mqa_topk() is given: mqa_topk_workspace_bytes(S, N, k) (512 MiB at most).
    DeviceTopkProblem(Device& device, const HostProblem& problem, int k);

    const HostProblem& host() const { return host_; }
    int k() const { return k_; }
    DeviceInputs::Views inputs() const { return inputs_.views(host_); }

    // mqa_topk() into this problem's indices (every other operand its own).
    void run(const MqaTopkOptions& options) const;
    void poison_indices(void* stream = nullptr);
    std::vector<std::int32_t> download_indices() const;
    // The logits mqa_logits() (clean_logits=false) computes with `kernel` ("baseline" or a variant
    // name), row stride host().logits_row_stride; a buffer of S x N floats is held meanwhile.
    std::vector<float> logits_of(const std::string& kernel) const;

private:
    Device& device_;
    HostProblem host_;
    int k_;
    DeviceInputs inputs_;
    std::unique_ptr<DeviceBuffer> indices_, workspace_;
};

// Each row's keys by the rule mqa_topk() documents: the min(k, window) largest logits of
// [cu_starts[i], cu_ends[i]) (clamped to [0, N)), equal logits at the k-th place going to the
// smaller keys (-0.0 equal to +0.0), in ascending key order, -1 in the slots past the window.
// `logits`: [S, row_stride].
std::vector<std::int32_t> expected_topk(const HostProblem& problem, const std::vector<float>& logits,
                                        std::int64_t row_stride, int k);

// A fresh seed per problem (a check never reuses another's data).
std::uint64_t fresh_topk_seed();

struct TopkCheck {
    bool passed = false;
    std::string kernel;   // what served the call (its report)
    std::string problem;  // why it failed: the first row that differs, a rerun that differs, ...
};

// mqa_topk() with `options` on poisoned indices against `expected` (expected_topk() over the
// logits of the kernel the call selects by), then once more, bit for bit.
TopkCheck check_topk(DeviceTopkProblem& problem, const std::vector<std::int32_t>& expected,
                     const MqaTopkOptions& options);

// The mqa_logits kernel a call served by `served` (its report's kernel: "fused <twgmma variant>",
// an mqa_logits variant or "baseline") selects by: the twgmma variant's twin, else itself.
std::string selecting_kernel_of_report(const std::string& served);

// check_topk() for a call whose kernel is not known beforehand (a path, no variant): one run to
// learn what serves it, then the check against that kernel's logits.
TopkCheck check_topk_call(DeviceTopkProblem& problem, const MqaTopkOptions& options);

}  // namespace mqajit::tools
