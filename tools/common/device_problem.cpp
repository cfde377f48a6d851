#include "tools/common/device_problem.hpp"

#include <fmt/format.h>

#include <cstring>

#include "core/check.hpp"
#include "tools/common/device_buffers.hpp"

namespace mqajit::tools {
namespace {

// bf16 poison: the top half of kPoisonBits, so a widened unwritten entry reads as kPoisonBits.
constexpr std::uint16_t kBf16PoisonBits = kPoisonBits >> 16;

DType checked_logits_dtype(DType dtype) {
    MQAJIT_CHECK(dtype == DType::float32 || dtype == DType::bfloat16, "logits are float32 or bfloat16, not {}",
                 to_string(dtype));
    return dtype;
}

}  // namespace

DeviceInputs::DeviceInputs(Device& device, const HostProblem& problem)
    : q_(upload(device, problem.q)),
      kv_(upload(device, problem.kv)),
      kv_scales_(upload(device, problem.kv_scales)),
      weights_(upload(device, problem.weights)),
      cu_starts_(upload(device, problem.cu_starts)),
      cu_ends_(upload(device, problem.cu_ends)) {}

DeviceInputs::Views DeviceInputs::views(const HostProblem& p) const {
    return Views{
        .q = TensorView::contiguous(q_->data(), DType::float8_e4m3, {p.seq_len, p.heads, p.head_dim}),
        .kv = TensorView::contiguous(kv_->data(), DType::float8_e4m3, {p.seq_len_kv, p.head_dim}),
        .kv_scales = TensorView::contiguous(kv_scales_->data(), DType::float32, {p.seq_len_kv}),
        .weights = TensorView::contiguous(weights_->data(), DType::float32, {p.seq_len, p.heads}),
        .cu_starts = TensorView::contiguous(cu_starts_->data(), DType::int32, {p.seq_len}),
        .cu_ends = TensorView::contiguous(cu_ends_->data(), DType::int32, {p.seq_len}),
    };
}

// NOTES: logits_dtype_ is initialized (checked) before inputs_ uploads anything.
DeviceProblem::DeviceProblem(Device& device, const HostProblem& problem, DType logits_dtype)
    : device_(device), host_(problem), logits_dtype_(checked_logits_dtype(logits_dtype)), inputs_(device, problem) {
    // Whole 32-bit words either way, so one fill_u32 poisons a bf16 buffer too.
    const std::size_t elements = static_cast<std::size_t>(problem.seq_len) * problem.logits_row_stride;
    logits_ = device.allocate(logits_dtype == DType::bfloat16 ? (elements + 1) / 2 * 4 : elements * sizeof(float));
    poison_logits();
}

DeviceProblem::Views DeviceProblem::views() const {
    const HostProblem& p = host_;
    const DeviceInputs::Views in = inputs_.views(p);
    return Views{
        .q = in.q, .kv = in.kv, .kv_scales = in.kv_scales, .weights = in.weights, .cu_starts = in.cu_starts,
        .cu_ends = in.cu_ends,
        .logits = TensorView::strided(logits_->data(), logits_dtype_, {p.seq_len, p.seq_len_kv},
                                      {p.logits_row_stride, 1}),
    };
}

void DeviceProblem::poison_logits(void* stream) {
    const std::uint32_t bits = logits_dtype_ == DType::bfloat16 ? (std::uint32_t{kBf16PoisonBits} << 16) | kBf16PoisonBits
                                                                : kPoisonBits;
    fill_floats(device_, *logits_, bits, stream);
}

std::vector<float> DeviceProblem::download_logits() const {
    if (logits_dtype_ == DType::float32) return download_floats(device_, *logits_);
    const std::size_t elements = static_cast<std::size_t>(host_.seq_len) * host_.logits_row_stride;
    std::vector<std::uint16_t> halves(logits_->size() / 2);
    device_.copy_to_host(halves.data(), logits_->data(), logits_->size());
    std::vector<float> out(elements);
    for (std::size_t i = 0; i < elements; ++i) {
        const std::uint32_t bits = halves[i] == kBf16PoisonBits ? kPoisonBits : std::uint32_t{halves[i]} << 16;
        std::memcpy(&out[i], &bits, 4);
    }
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
