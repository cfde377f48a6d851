"""mqa_topk on torch tensors: the indexer's top-k keys per query row.

    indices = mqajit.mqa_topk(q, (kv, kv_scales), weights, cu_starts, cu_ends, k=2048)
    indices, logits = mqajit.mqa_topk(q, (kv, kv_scales), weights, cu_starts, cu_ends, return_logits=True)

Row i of `indices` (int32 [S, k]) holds the k keys j in [cu_starts[i], cu_ends[i]) with the largest
logits as mqa_logits computes them, as absolute key positions in ascending order (sorted=True: by
logit, largest first, equal logits by key); among equal logits at the k-th place the smaller keys
are kept. Slots past a window of fewer than k keys hold -1 (and -inf in `logits`). The logits of
as many rows as fit in `workspace_bytes` (default 512 MiB, at least one row) are computed at a
time, so memory is the outputs plus that workspace for any number of keys. On sm_90a a fused path
(path="auto" picks it where it is expected to win, path="fused" asks for it) never computes the
logits matrix: its kernel keeps only each row's candidates, from a 2.5 k-slot buffer per row.
"""

import dataclasses
import operator

from . import _mqajit, _torch_hooks, _tuning, _views

_NAMES = ("q", "kv", "kv_scales", "weights", "cu_starts", "cu_ends")
_EXPECTED_OUT = "an int32 CUDA tensor [S, k], or with return_logits=True a tuple (int32 [S, k], float32 [S, k])"


def _outputs(hooks, out, rows, k, return_logits, device):
    if out is None:
        indices = hooks.empty_strided((rows, k), (k, 1), dtype=hooks.int32, device=device)
        logits = hooks.empty_strided((rows, k), (k, 1), dtype=hooks.float32, device=device) if return_logits else None
        return indices, logits
    if return_logits:
        if not isinstance(out, tuple) or len(out) != 2 or out[0] is None or out[1] is None:
            what = "a tuple holding None" if isinstance(out, tuple) and len(out) == 2 else type(out).__name__
            raise ValueError(f"out is {what}; with return_logits=True pass {_EXPECTED_OUT}")
        indices, logits = out
    elif isinstance(out, tuple):
        raise ValueError(f"out is a tuple; without return_logits pass {_EXPECTED_OUT}")
    else:
        indices, logits = out, None
    # The workspace is sized for k: an out of another width would run with its width instead.
    for name, tensor in (("out", indices), ("out's logits", logits)):
        shape = getattr(tensor, "shape", None)
        if shape is not None and len(shape) == 2 and shape[1] != k:
            raise ValueError(f"{name} has {shape[1]} columns but k is {k}; pass an out of k columns")
    return indices, logits


def mqa_topk(q, kv, weights, cu_starts, cu_ends, k=2048, out=None, *, sorted=False, return_logits=False,
             workspace_bytes=None, variant=None, report=None, path="auto"):
    """Top-k keys per row: int32 [S, k] indices, or (indices, float32 logits) with return_logits.
    `kv` is the (kv, kv_scales) pair mqa_logits takes; `out` (optional) is written instead of new
    tensors; `variant` names the kernel (an mqa_logits variant computing the scores, or a twgmma
    variant, the fused path's kernel; None: the tuned choice); `path` is "auto", "fused" or "unfused"; a dict passed as `report` receives {"kernel", "reason"}."""
    if not isinstance(kv, tuple) or len(kv) != 2:
        raise ValueError(f"kv is {type(kv).__name__}; pass the pair (kv, kv_scales): float8_e4m3fn [N, D] and "
                         "float32 [N]")
    kv, kv_scales = kv
    tensors = (q, kv, kv_scales, weights, cu_starts, cu_ends)
    for name, tensor in zip(_NAMES, tensors):
        _views.require_present(name, tensor)
    hooks = _torch_hooks.get("mqa_topk")
    device = _views.device_of_q(q)
    views = [_views.view_of(name, tensor, device) for name, tensor in zip(_NAMES, tensors)]
    k = operator.index(k)
    if k < 1:
        raise ValueError(f"k is {k}; pass a positive count of keys to select")
    rows = q.shape[0] if len(q.shape) >= 1 else 1  # the library says what is wrong with q
    keys = max(kv.shape[0] if len(kv.shape) >= 1 else 1, 1)
    indices, logits = _outputs(hooks, out, rows, k, bool(return_logits), device)
    max_bytes = (512 << 20) if workspace_bytes is None else operator.index(workspace_bytes)
    workspace = hooks.empty_strided((_mqajit.mqa_topk_workspace_bytes(max(rows, 1), keys, k, max_bytes),), (1,),
                                    dtype=hooks.uint8, device=device)
    stream = hooks.current_raw_stream(device.index)

    def run():
        return _mqajit.mqa_topk(*views, _views.view_of("indices", indices, device),
                                None if logits is None else _views.view_of("logits", logits, device),
                                _views.view_of("workspace", workspace, device), sorted=bool(sorted), stream=stream,
                                variant=variant or "", report=report is not None,
                                num_sms=_mqajit.num_sms_setting(), path=str(path), pdl=_mqajit.pdl_setting())

    _views.run_on(hooks, device, run, report)
    return (indices, logits) if return_logits else indices


@dataclasses.dataclass(frozen=True)
class TopkExplanation:
    path: str              # "fused" or "unfused"
    kernel: str            # the fused kernel (a twgmma variant), or the mqa_logits kernel of the unfused path
    logits_kernel: str     # the mqa_logits kernel whose values it selects by (the fused kernel's twin)
    reason: str
    workspace_bytes: int   # the workspace the decision assumed
    table: _tuning.Explanation   # the mqa_topk table's lookup; its row, when it has one, chose
    logits: _tuning.Explanation  # the mqa_logits lookup (clean_logits=False) that serves when it has none

    def __str__(self):
        return f"mqa_topk: {self.path} path, {self.kernel}: {self.reason}\n{self.table}\n{self.logits}"


def explain_topk(arch=None, cu_num=None, *, heads, head_dim, seq_len, seq_len_kv, k=2048, workspace_bytes=None,
                 path="auto"):
    """Which path (fused or unfused) and kernel would serve mqa_topk for this shape, and why, from
    the tuning table and the path rule alone (no GPU needed when arch and cu_num are given).
    workspace_bytes defaults to what mqa_topk takes (512 MiB at most)."""
    arch, cu_num = _tuning._device("explain_topk", arch, cu_num)
    answer = _mqajit.topk_explain(arch=arch, cu_num=cu_num, heads=heads, head_dim=head_dim, seq_len=seq_len,
                                  seq_len_kv=seq_len_kv, k=operator.index(k),
                                  workspace_bytes=0 if workspace_bytes is None else operator.index(workspace_bytes),
                                  path=str(path))
    table = _tuning.Explanation(**answer.pop("table"))
    logits = _tuning.Explanation(**answer.pop("logits"))
    return TopkExplanation(table=table, logits=logits, **answer)
