"""The checked path of mqa_logits: every argument checked in Python, one at a time, so that a
call the fast C++ entry does not take as it is (python/src/fast_call.cpp) gets the message that
says what is wrong, or, where it is valid (tensors on a device that is not the current one),
is made the long way. Its messages are the binding's; tests pin them."""

import operator

from . import _arguments, _mqajit, _torch_hooks, _views

# NOTES: DeepGEMM's packed FP4 is int8 data with int32 scales; torch's own is float4_e2m1fn_x2.
_FP4_DTYPE_NAMES = ("torch.int8", "torch.uint8", "torch.float4_e2m1fn_x2")


def _refuse_fp4(function_name, name, tensor):
    if str(getattr(tensor, "dtype", "")) in _FP4_DTYPE_NAMES:
        raise _views.unsupported(f"mqajit.{function_name}: {name} has dtype {tensor.dtype}, which looks like packed "
                                 "FP4; mqajit computes from float8_e4m3fn q and kv only (FP4 is not supported)")


def _allocate(hooks, q, kv, max_seqlen_k, logits_dtype, device):
    dtype = _views.logits_dtype(hooks, logits_dtype)
    # The library checks the shapes; a malformed q or kv gets a 1-row or 1-column out it rejects.
    num_rows = q.shape[0] if len(q.shape) >= 1 else 1
    num_columns = max_seqlen_k if max_seqlen_k > 0 else (kv.shape[0] if len(kv.shape) >= 1 else 1)
    element_bytes = 2 if dtype is hooks.bfloat16 else 4
    row_stride = _mqajit.logits_row_stride(num_columns, element_bytes)
    return hooks.empty_strided((num_rows, num_columns), (row_stride, 1), dtype=dtype, device=device)


def call(function_name, q, kv, kv_scales, weights, cu_starts, cu_ends, clean_logits, out, max_seqlen_k, logits_dtype,
         variant, report, reference):
    """mqa_logits with its names bound; the fast entry's arguments, in its order."""
    named = (("q", q), ("kv", kv), ("kv_scales", kv_scales), ("weights", weights), ("cu_starts", cu_starts),
             ("cu_ends", cu_ends))
    for name, tensor in named:
        _views.require_present(name, tensor)
    hooks = _torch_hooks.get(function_name)
    device = _views.device_of_q(q)
    _refuse_fp4(function_name, "q", q)
    _refuse_fp4(function_name, "kv", kv)
    views = [_views.view_of(name, tensor, device) for name, tensor in named]
    max_seqlen_k = operator.index(max_seqlen_k)
    if out is None:
        out = _allocate(hooks, q, kv, max_seqlen_k, logits_dtype, device)
    views.append(_views.view_of("out", out, device))
    if logits_dtype is not None and out.dtype != logits_dtype:
        raise ValueError(f"out is {out.dtype} but logits_dtype is {logits_dtype}; pass one of them")
    stream = hooks.current_raw_stream(device.index)
    clean_logits = bool(clean_logits)
    want_report = report is not None

    def run():
        if reference:
            return _mqajit.mqa_logits_reference(*views, clean_logits=clean_logits, stream=stream,
                                                max_seqlen_k=max_seqlen_k)
        return _mqajit.mqa_logits(*views, clean_logits=clean_logits, stream=stream, variant=variant or "",
                                  report=want_report, max_seqlen_k=max_seqlen_k, num_sms=_mqajit.num_sms_setting(),
                                  pdl=_mqajit.pdl_setting())

    _views.run_on(hooks, device, run, report)
    return out


# The two call forms, bound by Python's own rules where the fast entry found they do not bind:
# these raise the TypeError a Python function would.

def mqa_logits(q, kv, *args, variant=None, report=None, max_seqlen_k=0, logits_dtype=None, **kwargs):
    kv, kv_scales, weights, cu_starts, cu_ends, clean_logits, out = _arguments.bind("mqa_logits", kv, args, kwargs)
    return call("mqa_logits", q, kv, kv_scales, weights, cu_starts, cu_ends, clean_logits, out, max_seqlen_k,
                logits_dtype, variant, report, False)


def mqa_logits_reference(q, kv, *args, max_seqlen_k=0, logits_dtype=None, **kwargs):
    kv, kv_scales, weights, cu_starts, cu_ends, clean_logits, out = _arguments.bind("mqa_logits_reference", kv, args,
                                                                                    kwargs)
    return call("mqa_logits_reference", q, kv, kv_scales, weights, cu_starts, cu_ends, clean_logits, out,
                max_seqlen_k, logits_dtype, None, None, True)


_mqajit._set_checked_paths(call, mqa_logits, mqa_logits_reference)
