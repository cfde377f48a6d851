#include "mqajit/paged_mqa_logits.hpp"

#include "core/check.hpp"
#include "runtime/paged_dispatch.hpp"
#include "runtime/paged_mqa_logits_args.hpp"

namespace mqajit {

void paged_mqa_logits(const TensorView& q, const TensorView& kv_cache, const TensorView& weights,
                      const TensorView& context_lens, const TensorView& block_table, const TensorView& logits,
                      const PagedMqaLogitsOptions& options) {
    MQAJIT_CHECK(options.num_sms >= 0, "options.num_sms must be 0 (all) or a positive count; got {}", options.num_sms);
    PagedMqaLogitsArgs args =
        make_paged_mqa_logits_args(q, kv_cache, weights, context_lens, block_table, logits, options.clean_logits);
    args.shape.num_sms = options.num_sms;
    PagedDispatcher::instance().run(args, options);
}

void paged_mqa_logits_reference(const TensorView& q, const TensorView& kv_cache, const TensorView& weights,
                                const TensorView& context_lens, const TensorView& block_table,
                                const TensorView& logits, bool clean_logits, void* stream) {
    PagedMqaLogitsArgs args =
        make_paged_mqa_logits_args(q, kv_cache, weights, context_lens, block_table, logits, clean_logits);
    PagedDispatcher::instance().run_reference(args, stream);
}

}  // namespace mqajit
