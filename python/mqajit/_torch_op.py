"""torch.ops.mqajit.mqa_logits (and torch.ops.mqajit.paged_mqa_logits, the decode op): the operator as a torch custom op with a fake implementation, so
torch.compile traces through it (its output's shape, dtype and strides come from the fake) and
CUDA graphs and Inductor see an ordinary op. Registered on import where torch has
torch.library.custom_op (torch 2.4 and later); elsewhere torch_op_available() says why not."""

import importlib.util
import sys

from . import _mqajit

OP_NAME = "mqajit::mqa_logits"
PAGED_OP_NAME = "mqajit::paged_mqa_logits"

_status = None  # (registered, reason)


def _register(torch):
    from typing import Optional

    Tensor = torch.Tensor

    # NOTES: annotations are what custom_op reads the schema from; they must be real objects, so
    # this module does not use `from __future__ import annotations`.
    @torch.library.custom_op(OP_NAME, mutates_args=())
    def mqa_logits(q: Tensor, kv: Tensor, kv_scales: Tensor, weights: Tensor, cu_starts: Tensor, cu_ends: Tensor,
                   clean_logits: bool = True, max_seqlen_k: int = 0,
                   logits_dtype: Optional[torch.dtype] = None) -> Tensor:
        return _mqajit.tensor_mqa_logits(q, kv, kv_scales, weights, cu_starts, cu_ends, clean_logits,
                                         max_seqlen_k=max_seqlen_k, logits_dtype=logits_dtype)

    @mqa_logits.register_fake
    def _(q, kv, kv_scales, weights, cu_starts, cu_ends, clean_logits=True, max_seqlen_k=0, logits_dtype=None):
        # The same layout the real call allocates: rows padded to 128 bytes.
        dtype = torch.float32 if logits_dtype is None else logits_dtype
        columns = max_seqlen_k if max_seqlen_k > 0 else kv.shape[0]
        element_bytes = 2 if dtype == torch.bfloat16 else 4
        align = 128 // element_bytes
        row_stride = (columns + align - 1) // align * align
        return torch.empty_strided((q.shape[0], columns), (row_stride, 1), dtype=dtype, device=q.device)

    @torch.library.custom_op(PAGED_OP_NAME, mutates_args=())
    def paged_mqa_logits(q: Tensor, kv_cache: Tensor, weights: Tensor, context_lens: Tensor, block_table: Tensor,
                         max_context_len: int, clean_logits: bool = False) -> Tensor:
        from . import _paged
        return _paged.paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, max_context_len,
                                       clean_logits)

    @paged_mqa_logits.register_fake
    def _(q, kv_cache, weights, context_lens, block_table, max_context_len, clean_logits=False):
        # The layout the real call allocates: float32 rows padded to 128 bytes.
        row_stride = _mqajit.logits_row_stride(max(max_context_len, 1), 4)
        return torch.empty_strided((q.shape[0] * q.shape[1], max_context_len), (row_stride, 1), dtype=torch.float32,
                                   device=q.device)

    return mqa_logits


def register():
    """Registers the op once, if torch is importable and has torch.library.custom_op; returns
    (registered, reason)."""
    global _status
    if _status is not None:
        return _status
    torch = sys.modules.get("torch")
    if torch is None and importlib.util.find_spec("torch") is None:
        _status = (False, "torch is not installed")
        return _status
    try:
        import torch
    except Exception as error:  # an installed torch that fails to import: mqajit still imports
        _status = (False, f"torch failed to import: {error}")
        return _status
    if not hasattr(getattr(torch, "library", None), "custom_op"):
        _status = (False, f"torch {torch.__version__} has no torch.library.custom_op (it came in torch 2.4)")
        return _status
    _register(torch)
    _status = (True, f"registered as torch.ops.{OP_NAME.replace('::', '.')}")
    return _status


def torch_op_available():
    """(registered, reason): whether torch.ops.mqajit.mqa_logits exists, and why not."""
    return register()
