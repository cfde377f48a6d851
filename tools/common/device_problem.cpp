#include "tools/common/device_problem.hpp"

#include <fmt/format.h>

#include <cstring>

#include "core/check.hpp"

namespace mqajit::tools {
namespace {

template <typename T>
std::unique_ptr<DeviceBuffer> upload(Device& device, const std::vector<T>& values) {
    auto buffer = device.allocate(values.size() * sizeof(T));
    device.copy_to_device(buffer->data(), values.data(), values.size() * sizeof(T));
    return buffer;
}

}  // namespace

DeviceProblem::DeviceProblem(Device& device, const HostProblem& problem) : device_(device), host_(problem) {
    q_ = upload(device, problem.q);
    kv_ = upload(device, problem.kv);
    kv_scales_ = upload(device, problem.kv_scales);
    weights_ = upload(device, problem.weights);
    cu_starts_ = upload(device, problem.cu_starts);
    cu_ends_ = upload(device, problem.cu_ends);
    logits_ = device.allocate(static_cast<std::size_t>(problem.seq_len) * problem.logits_row_stride * sizeof(float));
    poison_logits();
}

DeviceProblem::Views DeviceProblem::views() const {
    const HostProblem& p = host_;
    return Views{
        .q = TensorView::contiguous(q_->data(), DType::float8_e4m3, {p.seq_len, p.heads, p.head_dim}),
        .kv = TensorView::contiguous(kv_->data(), DType::float8_e4m3, {p.seq_len_kv, p.head_dim}),
        .kv_scales = TensorView::contiguous(kv_scales_->data(), DType::float32, {p.seq_len_kv}),
        .weights = TensorView::contiguous(weights_->data(), DType::float32, {p.seq_len, p.heads}),
        .cu_starts = TensorView::contiguous(cu_starts_->data(), DType::int32, {p.seq_len}),
        .cu_ends = TensorView::contiguous(cu_ends_->data(), DType::int32, {p.seq_len}),
        .logits = TensorView::strided(logits_->data(), DType::float32, {p.seq_len, p.seq_len_kv},
                                      {p.logits_row_stride, 1}),
    };
}

void DeviceProblem::poison_logits(void* stream) {
    device_.fill_u32(logits_->data(), kPoisonBits, logits_->size() / sizeof(float), stream);
}

std::vector<float> DeviceProblem::download_logits() const {
    std::vector<float> out(logits_->size() / sizeof(float));
    device_.copy_to_host(out.data(), logits_->data(), logits_->size());
    return out;
}

void DeviceProblem::run(const MqaLogitsOptions& options) const {
    const Views v = views();
    mqa_logits(v.q, v.kv, v.kv_scales, v.weights, v.cu_starts, v.cu_ends, v.logits, options);
}

void DeviceProblem::run_reference(bool clean_logits, void* stream) const {
    const Views v = views();
    mqa_logits_reference(v.q, v.kv, v.kv_scales, v.weights, v.cu_starts, v.cu_ends, v.logits, clean_logits, stream);
}

std::string CheckResult::summary() const {
    return fmt::format("{}: {}{}", kernel, comparison.summary(), deterministic ? "" : "; NOT bitwise deterministic");
}

std::vector<float> reference_logits(DeviceProblem& problem, bool clean_logits) {
    problem.poison_logits();
    problem.run_reference(clean_logits);
    return problem.download_logits();
}

CheckResult check_against(DeviceProblem& problem, const std::vector<float>& expected,
                          const MqaLogitsOptions& options) {
    const HostProblem& p = problem.host();
    MQAJIT_CHECK_KIND(internal, expected.size() == static_cast<std::size_t>(p.seq_len) * p.logits_row_stride,
                      "the reference holds {} logits, but the problem has {} x {}; compute it with "
                      "reference_logits() on the same problem",
                      expected.size(), p.seq_len, p.logits_row_stride);
    return check_twice(
        problem, options, [&](const std::vector<float>& got) { return compare_logits(p, got, expected, options.clean_logits); },
        p.seq_len, p.logits_row_stride, p.seq_len_kv);
}

CheckResult check_against_reference(DeviceProblem& problem, const MqaLogitsOptions& options) {
    return check_against(problem, reference_logits(problem, options.clean_logits), options);
}

}  // namespace mqajit::tools
