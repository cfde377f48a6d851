"""mqajit: the FP8 MQA-logits operator ("lightning indexer") from JIT-generated kernels.

    logits = mqajit.mqa_logits(q, (kv, kv_scales), weights, cu_starts, cu_ends)

Tensors are torch CUDA tensors (torch is needed only to call mqa_logits, not to import mqajit).
Errors: ValueError for input the library rejects, RuntimeError for runtime failures; either
carries the library's message, and its `kind` attribute names the library's error kind.
"""

from ._mqajit import __version__, device_info
from ._ops import mqa_logits, mqa_logits_reference
from ._tuning import Explanation, RuntimeStatus, explain, lookup, runtime_status

__all__ = ["Explanation", "RuntimeStatus", "__version__", "device_info", "explain", "lookup", "mqa_logits",
           "mqa_logits_reference", "runtime_status"]
