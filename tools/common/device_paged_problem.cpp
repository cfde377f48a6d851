#include "tools/common/device_paged_problem.hpp"

#include "core/check.hpp"
#include "tools/common/device_buffers.hpp"
#include "tools/common/problem.hpp"

namespace mqajit::tools {
DevicePagedProblem::DevicePagedProblem(Device& device, const HostPagedProblem& problem)
    : device_(device), host_(problem) {
    q_ = upload(device, problem.q);
    kv_cache_ = upload(device, problem.kv_cache);
    weights_ = upload(device, problem.weights);
    context_lens_ = upload(device, problem.context_lens);
    block_table_ = upload(device, problem.block_table);
    logits_ = device.allocate(static_cast<std::size_t>(problem.rows() * problem.logits_row_stride) * sizeof(float));
    poison_logits();
}

DevicePagedProblem::Views DevicePagedProblem::views() const {
    const HostPagedProblem& p = host_;
    const PagedProblemSpec& s = p.spec;
    const TensorView context_lens =
        s.context_lens_2d ? TensorView::contiguous(context_lens_->data(), DType::int32, {s.batch, s.next_n})
                          : TensorView::contiguous(context_lens_->data(), DType::int32, {s.batch});
    return Views{
        .q = TensorView::contiguous(q_->data(), DType::float8_e4m3, {s.batch, s.next_n, s.heads, s.head_dim}),
        .kv_cache = TensorView::contiguous(kv_cache_->data(), DType::uint8,
                                           {p.num_cache_blocks, s.block_kv, 1, s.head_dim + 4}),
        .weights = TensorView::contiguous(weights_->data(), DType::float32, {p.rows(), s.heads}),
        .context_lens = context_lens,
        .block_table = TensorView::contiguous(block_table_->data(), DType::int32, {s.batch, p.max_blocks}),
        .logits = TensorView::strided(logits_->data(), DType::float32, {p.rows(), p.max_context_len},
                                      {p.logits_row_stride, 1}),
    };
}

void DevicePagedProblem::poison_logits(void* stream) { fill_floats(device_, *logits_, kPoisonBits, stream); }

std::vector<float> DevicePagedProblem::download_logits() const { return download_floats(device_, *logits_); }

void DevicePagedProblem::run(const PagedMqaLogitsOptions& options) const {
    const Views v = views();
    paged_mqa_logits(v.q, v.kv_cache, v.weights, v.context_lens, v.block_table, v.logits, options);
}

void DevicePagedProblem::run_reference(bool clean_logits, void* stream) const {
    const Views v = views();
    paged_mqa_logits_reference(v.q, v.kv_cache, v.weights, v.context_lens, v.block_table, v.logits, clean_logits,
                               stream);
}

std::vector<float> reference_paged_logits(DevicePagedProblem& problem, bool clean_logits) {
    problem.poison_logits();
    problem.run_reference(clean_logits);
    return problem.download_logits();
}

CheckResult check_paged_against(DevicePagedProblem& problem, const std::vector<float>& expected,
                                const PagedMqaLogitsOptions& options) {
    const HostPagedProblem& p = problem.host();
    MQAJIT_CHECK_KIND(internal, expected.size() == static_cast<std::size_t>(p.rows() * p.logits_row_stride),
                      "the reference holds {} logits, but the problem has {} x {}; compute it with "
                      "reference_paged_logits() on the same problem", expected.size(), p.rows(), p.logits_row_stride);
    // NOTES: without clean_logits the columns a token does not see stay poisoned in both runs,
    // so comparing each row's max_context_len columns bit for bit covers both modes.
    return check_twice(
        problem, options,
        [&](const std::vector<float>& got) { return compare_paged_logits(p, got, expected, options.clean_logits); },
        p.rows(), p.logits_row_stride, p.max_context_len);
}

}  // namespace mqajit::tools
