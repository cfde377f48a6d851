"""DeepGEMM's call surface, so an engine that calls deep_gemm.fp8_mqa_logits or
deep_gemm.fp8_fp4_mqa_logits can call mqajit's with the same arguments and keywords.

    logits = mqajit.fp8_mqa_logits(q, (kv, kv_scales), weights, cu_seq_len_k_start, cu_seq_len_k_end,
                                   clean_logits=False)
    logits = mqajit.fp8_fp4_mqa_logits((q, None), (kv, kv_scales), weights, ks, ke, clean_logits=False)

Both go straight to the fast C++ entry. FP4 inputs (a q_scale, packed int8 data) are refused
with ValueError of kind 'unsupported'.
"""

from . import _mqajit, _views

_fast_call = _mqajit._fast_call


def _pair(function_name, name, value, form):
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return value
    raise ValueError(f"mqajit.{function_name}: {name} must be a {form} pair, not {type(value).__name__}")


def fp8_mqa_logits(q, kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits=True, max_seqlen_k=0):
    """DeepGEMM's fp8_mqa_logits: q float8_e4m3fn [S, H, D], kv = (kv float8_e4m3fn [N, D], kv_scales
    float32 [N]), weights float32 [S, H], cu_seq_len_k_start / cu_seq_len_k_end int32 [S].

    Returns float32 logits [S, N] (a view of row-padded storage), or, with max_seqlen_k > 0 (which
    needs clean_logits=False), compressed rows [S, max_seqlen_k]: row i holds
    logits[i, cu_seq_len_k_start[i] + c], written by the kernels in the same pass (columns past a row's
    window hold anything). mqajit.mqa_logits' rules and errors apply.
    """
    kv, kv_scales = _pair("fp8_mqa_logits", "kv", kv, "(kv, kv_scales)")
    return _fast_call("fp8_mqa_logits", q, kv, kv_scales, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits,
                      None, max_seqlen_k, None, None, None, False)


def fp8_fp4_mqa_logits(q, kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits=True, max_seqlen_k=0,
                       logits_dtype=None):
    """DeepGEMM's fp8_fp4_mqa_logits: q = (q, q_scale) and kv = (kv, kv_scales); q_scale None selects
    FP8 (q float8_e4m3fn, kv_scales float32), the only mode mqajit has: a q_scale (FP4) is refused
    with ValueError of kind 'unsupported'. logits_dtype: torch.float32 (None means it) or
    torch.bfloat16 (the fp32 logits rounded to nearest even, written by the kernel). Otherwise as
    fp8_mqa_logits.
    """
    q, q_scale = _pair("fp8_fp4_mqa_logits", "q", q, "(q, q_scale)")
    if q_scale is not None:
        raise _views.unsupported("mqajit.fp8_fp4_mqa_logits: q_scale is given, which selects FP4 (packed e2m1 q and "
                                 "kv with scales); mqajit computes from float8_e4m3fn q and kv only: pass (q, None)")
    kv, kv_scales = _pair("fp8_fp4_mqa_logits", "kv", kv, "(kv, kv_scales)")
    return _fast_call("fp8_fp4_mqa_logits", q, kv, kv_scales, weights, cu_seq_len_k_start, cu_seq_len_k_end,
                      clean_logits, None, max_seqlen_k, logits_dtype, None, None, False)
