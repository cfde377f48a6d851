"""mqajit: the FP8 MQA-logits operator ("lightning indexer") from JIT-generated kernels.

    logits = mqajit.mqa_logits(q, (kv, kv_scales), weights, cu_starts, cu_ends)
    logits = mqajit.fp8_mqa_logits(q, (kv, kv_scales), weights, ks, ke, clean_logits=False)  # DeepGEMM's surface
    logits = mqajit.paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, max_context_len)  # decode
    indices = mqajit.mqa_topk(q, (kv, kv_scales), weights, cu_starts, cu_ends, k=2048)  # the top-k keys per row

Tensors are torch CUDA tensors (torch is needed only to call mqa_logits, not to import mqajit).
Where torch has torch.library.custom_op, torch.ops.mqajit.mqa_logits is the same operator as a
torch op (for torch.compile). Errors: ValueError for input the library rejects, RuntimeError for
runtime failures; either carries the library's message, and its `kind` attribute names the
library's error kind.
"""

from ._mqajit import __version__, device_info
from ._deepgemm import fp8_fp4_mqa_logits, fp8_mqa_logits
from ._num_sms import get_num_sms, set_num_sms
from ._ops import mqa_logits, mqa_logits_reference
from ._pdl import get_pdl, set_pdl
from ._topk import TopkExplanation, explain_topk, mqa_topk
from ._paged import fp8_paged_mqa_logits, get_paged_mqa_logits_metadata, paged_mqa_logits, paged_mqa_logits_reference
from ._torch_op import register as _register_torch_op, torch_op_available
from ._tuning import Explanation, RuntimeStatus, explain, lookup, runtime_status

_register_torch_op()

__all__ = ["Explanation", "RuntimeStatus", "TopkExplanation", "__version__", "device_info", "explain", "explain_topk",
           "fp8_fp4_mqa_logits",
           "fp8_mqa_logits", "fp8_paged_mqa_logits", "get_num_sms", "get_paged_mqa_logits_metadata", "get_pdl", "lookup",
           "mqa_logits", "mqa_logits_reference", "mqa_topk", "paged_mqa_logits", "paged_mqa_logits_reference",
           "runtime_status", "set_num_sms", "set_pdl", "torch_op_available"]
