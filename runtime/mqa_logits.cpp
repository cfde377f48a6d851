#include "mqajit/mqa_logits.hpp"

#include "core/check.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/mqa_logits_args.hpp"

namespace mqajit {

void mqa_logits(const TensorView& q, const TensorView& kv, const TensorView& kv_scales, const TensorView& weights,
                const TensorView& cu_starts, const TensorView& cu_ends, const TensorView& logits,
                const MqaLogitsOptions& options) {
    MQAJIT_CHECK(options.kv_splits >= 0, "options.kv_splits must be 0 (automatic) or a positive count; got {}",
                 options.kv_splits);
    MQAJIT_CHECK(options.num_sms >= 0, "options.num_sms must be 0 (all) or a positive count; got {}",
                 options.num_sms);
    MqaLogitsArgs args = make_mqa_logits_args(q, kv, kv_scales, weights, cu_starts, cu_ends, logits,
                                              options.clean_logits, options.max_seqlen_k);
    check_logits_apart(q, kv, kv_scales, weights, cu_starts, cu_ends, logits);
    args.params.num_kv_splits = options.kv_splits;
    args.shape.num_sms = options.num_sms;
    Dispatcher::instance().run(args, options);
}

void mqa_logits_reference(const TensorView& q, const TensorView& kv, const TensorView& kv_scales,
                          const TensorView& weights, const TensorView& cu_starts, const TensorView& cu_ends,
                          const TensorView& logits, bool clean_logits, void* stream, int max_seqlen_k) {
    MqaLogitsArgs args =
        make_mqa_logits_args(q, kv, kv_scales, weights, cu_starts, cu_ends, logits, clean_logits, max_seqlen_k);
    check_logits_apart(q, kv, kv_scales, weights, cu_starts, cu_ends, logits);
    Dispatcher::instance().run_reference(args, stream);
}

}  // namespace mqajit
