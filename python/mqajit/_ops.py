"""mqa_logits for torch tensors: check and convert in Python, compute in the C++ library."""

import sys

from . import _arguments, _mqajit, _views

# NOTES: rows of a logits tensor we allocate start on 128-byte boundaries, so each warp's
# coalesced row stores begin on a cache line; the returned view's stride(0) shows the padding.
ROW_ALIGN_ELEMENTS = 32

_torch = None


def _require_torch(function_name):
    global _torch
    if _torch is None:
        _torch = sys.modules.get("torch")
        if _torch is None:
            try:
                import torch as _torch_module
            except ImportError as error:
                raise RuntimeError(f"mqajit.{function_name} takes torch tensors, but PyTorch is not importable "
                                   f"here ({error}); install torch, or call mqajit._mqajit.{function_name} "
                                   "with (data_ptr, dtype, shape, strides) tuples") from None
            _torch = _torch_module
    return _torch


def _prepare(function_name, q, kv, args, kwargs):
    kv, kv_scales, weights, cu_starts, cu_ends, clean_logits, out = _arguments.bind(function_name, kv, args, kwargs)
    named = (("q", q), ("kv", kv), ("kv_scales", kv_scales), ("weights", weights), ("cu_starts", cu_starts),
             ("cu_ends", cu_ends))
    for name, tensor in named:
        _views.require_present(name, tensor)
    torch = _require_torch(function_name)
    try:
        device = q.device
    except AttributeError:
        raise ValueError(f"q is not a torch tensor (got {type(q).__name__}); pass {_views.EXPECTED['q']}") from None
    views = [_views.view_of(name, tensor, device) for name, tensor in named]
    if out is None:
        # The library checks the shapes; a malformed q or kv gets a 1-row or 1-column out it rejects.
        num_rows = q.shape[0] if q.dim() >= 1 else 1
        num_columns = kv.shape[0] if kv.dim() >= 1 else 1
        padded_columns = -(-num_columns // ROW_ALIGN_ELEMENTS) * ROW_ALIGN_ELEMENTS
        out = torch.empty((num_rows, padded_columns), dtype=torch.float32, device=device)[:, :num_columns]
    views.append(_views.view_of("out", out, device))
    return torch, device, views, bool(clean_logits), out


def _on_device(torch, device, call):
    # NOTES: the library runs in the calling thread's current CUDA context; make it q's device.
    if device.index is None or device.index == torch.cuda.current_device():
        return call()
    with torch.cuda.device(device):
        return call()


def mqa_logits(q, kv, *args, variant=None, report=None, **kwargs):
    """mqa_logits(q, kv, kv_scales, weights, cu_starts, cu_ends, clean_logits=True, out=None)
    mqa_logits(q, (kv, kv_scales), weights, cu_starts, cu_ends, clean_logits=True, out=None)

    logits[i, j] = kv_scales[j] * sum_h weights[i, h] * relu(q[i, h, :] . kv[j, :])
    for cu_starts[i] <= j < cu_ends[i] (clamped to [0, N)); -inf elsewhere when clean_logits,
    left unwritten otherwise.

    q: float8_e4m3fn [S, H, D] (H 32 or 64, D 64 or 128); kv: float8_e4m3fn [N, D];
    kv_scales: float32 [N]; weights: float32 [S, H]; cu_starts, cu_ends: int32 [S]; all CUDA
    tensors on one device, innermost dimension dense. Returns `out` (float32 [S, N], any row
    stride >= N) or, when out is None, a new [S, N] view of row-padded storage.

    Runs on torch.cuda.current_stream() of q's device without synchronizing the host, so it can
    be captured in a CUDA graph (after one warm-up call per shape, which may compile a kernel).
    variant: None lets the tuning table decide, "baseline" picks the pre-built kernel, anything
    else names a variant. report: a dict to fill with the serving "kernel" and the "reason".
    Bad input raises ValueError; runtime failures raise RuntimeError.
    """
    torch, device, views, clean_logits, out = _prepare("mqa_logits", q, kv, args, kwargs)
    stream = torch.cuda.current_stream(device).cuda_stream
    want_report = report is not None

    def call():
        return _mqajit.mqa_logits(*views, clean_logits=clean_logits, stream=stream, variant=variant or "",
                                  report=want_report)

    served = _on_device(torch, device, call)
    if want_report:
        report.update(served)
    return out


def mqa_logits_reference(q, kv, *args, **kwargs):
    """The same operator and call forms as mqa_logits, from the slow fp32 reference kernel."""
    torch, device, views, clean_logits, out = _prepare("mqa_logits_reference", q, kv, args, kwargs)
    stream = torch.cuda.current_stream(device).cuda_stream
    _on_device(torch, device,
               lambda: _mqajit.mqa_logits_reference(*views, clean_logits=clean_logits, stream=stream))
    return out
