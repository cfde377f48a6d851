"""paged_mqa_logits on torch tensors: the decode half of the indexer over a paged KV cache.

    logits = mqajit.paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, max_context_len)

q float8_e4m3fn [B, next_n, H, D]; kv_cache uint8 [num_blocks, block_kv, 1, D + 4] (each block:
block_kv x D key bytes, then block_kv fp32 scales); weights float32 [B * next_n, H]; context_lens
int32 [B] (token t of request b sees keys j < context_lens[b] - next_n + t + 1) or [B, next_n]
(token t sees j < context_lens[b, t]); block_table int32 [B, max_blocks]. Returns float32 logits
[B * next_n, max_context_len] (rows padded to 128 bytes); columns a token does not see are -inf
with clean_logits and left as they were otherwise. No host-side metadata: one launch, which
reads the lengths and the table on the device, so a CUDA graph replays with any lengths.
"""

import operator

from . import _mqajit, _torch_hooks, _views

_NAMES = ("q", "kv_cache", "weights", "context_lens", "block_table")


def _call(function_name, q, kv_cache, weights, context_lens, block_table, max_context_len, clean_logits, out,
          variant, report, reference):
    """The checked path: every argument checked here, one at a time, for the message that says what
    is wrong. The public functions go through _mqajit._paged_fast_call (python/src/paged_fast_call.cpp),
    which hands a call here only where it does not take it as it is."""
    tensors = (q, kv_cache, weights, context_lens, block_table)
    for name, tensor in zip(_NAMES, tensors):
        _views.require_present(name, tensor)
    hooks = _torch_hooks.get(function_name)
    device = _views.device_of_q(q, "a float8_e4m3fn CUDA tensor [B, next_n, H, D]")
    views = [_views.view_of(name, tensor, device) for name, tensor in zip(_NAMES, tensors)]
    max_context_len = operator.index(max_context_len)
    if max_context_len < 1:
        raise ValueError(f"max_context_len is {max_context_len}; pass the logits' width, at least every context length "
                         "and at least 1")
    if out is not None and len(out.shape) == 2 and out.shape[1] != max_context_len:
        raise ValueError(f"out has {out.shape[1]} columns but max_context_len is {max_context_len}; pass an out of "
                         "max_context_len columns")
    if out is None:
        rows = q.shape[0] * q.shape[1] if len(q.shape) >= 2 else 1  # the library says what is wrong with q
        row_stride = _mqajit.logits_row_stride(max_context_len, 4)
        out = hooks.empty_strided((rows, max_context_len), (row_stride, 1), dtype=hooks.float32, device=device)
    views.append(_views.view_of("paged_out", out, device))
    stream = hooks.current_raw_stream(device.index)
    clean_logits = bool(clean_logits)

    def run():
        if reference:
            return _mqajit.paged_mqa_logits_reference(*views, clean_logits=clean_logits, stream=stream)
        return _mqajit.paged_mqa_logits(*views, clean_logits=clean_logits, stream=stream, variant=variant or "",
                                        report=report is not None, num_sms=_mqajit.num_sms_setting(),
                                        pdl=_mqajit.pdl_setting())

    _views.run_on(hooks, device, run, report)
    return out


_fast_call = _mqajit._paged_fast_call
_mqajit._set_paged_checked_path(_call)


def paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, max_context_len, clean_logits=False, out=None,
                     *, variant=None, report=None):
    """Decode logits [B * next_n, max_context_len]. `out` (optional) is written instead of a new
    tensor; `variant` names a pwgmma kernel ("baseline": the pre-built one; None: the decode
    tuning table decides); a dict passed as `report` receives {"kernel", "reason"}."""
    return _fast_call("paged_mqa_logits", q, kv_cache, weights, context_lens, block_table, max_context_len,
                      clean_logits, out, variant, report, False)


def paged_mqa_logits_reference(q, kv_cache, weights, context_lens, block_table, max_context_len, clean_logits=False,
                               out=None):
    """The same operator from the slow fp32 reference kernel, for checking results."""
    return _fast_call("paged_mqa_logits_reference", q, kv_cache, weights, context_lens, block_table,
                      max_context_len, clean_logits, out, None, None, True)


def get_paged_mqa_logits_metadata(context_lens, block_kv, num_sms):
    """DeepGEMM's scheduling metadata call, for code written against it. mqajit's decode kernel
    splits the work on the device from context_lens itself, so there is nothing to compute: the
    arguments are checked and an empty int32 tensor on context_lens' device is returned, which
    fp8_paged_mqa_logits accepts (and ignores) as schedule_meta."""
    _views.require_present("context_lens", context_lens)
    block_kv, num_sms = operator.index(block_kv), operator.index(num_sms)
    if block_kv <= 0 or num_sms < 0:
        raise ValueError(f"block_kv is {block_kv} and num_sms {num_sms}; pass a positive block size and a count >= 0")
    hooks = _torch_hooks.get("get_paged_mqa_logits_metadata")
    return hooks.empty_strided((0,), (1,), dtype=hooks.int32, device=context_lens.device)


def fp8_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len,
                         clean_logits=False):
    """DeepGEMM's fp8_paged_mqa_logits: the same arguments, `schedule_meta` unused (see
    get_paged_mqa_logits_metadata). Returns float32 logits [B * next_n, max_context_len]."""
    return _fast_call("fp8_paged_mqa_logits", q, kv_cache, weights, context_lens, block_table, max_context_len,
                      clean_logits, None, None, None, False)
