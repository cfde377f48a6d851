"""GPU tests of the call surface around mqa_logits: the fast path against the checked one,
DeepGEMM's keywords, bf16 and compressed logits (skipped while the kernels refuse them), the SM
cap, and the torch op under opcheck and torch.compile. test_gpu.py runs this file too (ctest
python_gpu); the problems and the reference are test_gpu.py's."""

import math

from test_gpu import Problem, assert_sums_of, calc_diff, check, mqajit, pytest, pytestmark, torch, torch_reference  # noqa: F401


def test_fast_and_checked_paths_give_the_same_bits_and_layout():
    from mqajit import _checked
    problem = Problem(300, 32, 5000, "random", seed=31)
    for clean_logits in (True, False):
        fast = mqajit.mqa_logits(*problem.arguments(), clean_logits)
        checked = _checked.mqa_logits(*problem.arguments(), clean_logits)
        out = torch.full((300, 5000), math.nan, device="cuda")
        assert mqajit.mqa_logits(*problem.arguments(), clean_logits, out) is out
        torch.cuda.synchronize()
        assert fast.stride() == checked.stride() and fast.dtype == checked.dtype == torch.float32
        inside = torch_reference(problem, clean_logits)[1]
        assert torch.equal(fast[inside], checked[inside]) and torch.equal(out[inside], checked[inside])
        if clean_logits:
            assert torch.equal(fast, checked) and torch.equal(out, checked)


def test_both_tensor_readers_give_the_same_bits():
    import os
    from mqajit import _torch_hooks
    problem = Problem(200, 64, 3000, "packed", seed=37)
    first = mqajit.mqa_logits(*problem.arguments())
    status = _torch_hooks.reader_status()
    if not status.startswith("torch's C++ types"):
        pytest.skip(f"the torch reader is not in use: {status}")
    os.environ["MQAJIT_TORCH_READER"] = "0"
    try:
        _torch_hooks.install(None)
        second = mqajit.mqa_logits(*problem.arguments())
        assert _torch_hooks.reader_status().startswith("Python attributes")
    finally:
        del os.environ["MQAJIT_TORCH_READER"]
        _torch_hooks.install(None)
    torch.cuda.synchronize()
    assert first.stride() == second.stride() and torch.equal(first, second)


def deepgemm_keywords(problem, **changes):
    """A call as DeepGEMM's test makes it: every argument by keyword."""
    keywords = dict(q=(problem.q, None), kv=(problem.kv, problem.kv_scales), weights=problem.weights,
                    cu_seq_len_k_start=problem.cu_starts, cu_seq_len_k_end=problem.cu_ends, clean_logits=True,
                    max_seqlen_k=0, logits_dtype=torch.float32)
    keywords.update(changes)
    return keywords


def test_deepgemm_surface_matches_the_torch_reference():
    problem = Problem(256, 64, 4096, "causal", seed=41)
    expected, inside = torch_reference(problem)
    check(mqajit.fp8_fp4_mqa_logits(**deepgemm_keywords(problem)), expected)
    keywords = deepgemm_keywords(problem, q=problem.q, clean_logits=False)
    del keywords["logits_dtype"]
    unclean = mqajit.fp8_mqa_logits(**keywords)
    torch.cuda.synchronize()
    assert calc_diff(unclean[inside], expected[inside]) < 1e-5
    positional = mqajit.fp8_fp4_mqa_logits((problem.q, None), (problem.kv, problem.kv_scales), problem.weights,
                                           problem.cu_starts, problem.cu_ends, False)
    torch.cuda.synchronize()
    assert torch.equal(positional[inside], unclean[inside])
    with pytest.raises(ValueError, match="selects FP4") as raised:
        mqajit.fp8_fp4_mqa_logits(**deepgemm_keywords(problem, q=(problem.q, problem.kv_scales)))
    assert raised.value.kind == "unsupported"


def test_bf16_logits_are_the_fp32_logits_rounded_to_nearest_even():
    problem = Problem(200, 32, 3000, "random", seed=43)
    expected, inside = torch_reference(problem)
    dense = mqajit.fp8_fp4_mqa_logits(**deepgemm_keywords(problem))
    logits = mqajit.fp8_fp4_mqa_logits(**deepgemm_keywords(problem, logits_dtype=torch.bfloat16))
    torch.cuda.synchronize()
    assert logits.dtype == torch.bfloat16 and tuple(logits.shape) == (200, 3000)
    assert torch.equal(logits, dense.to(torch.bfloat16))  # the same kernel's values, one rounding
    assert torch.equal(torch.isneginf(logits), torch.isneginf(expected))
    assert calc_diff(logits[inside].float(), expected[inside]) < 1e-3  # bf16 rounding of each logit
    # Into a caller's padded, NaN-poisoned output: the padding stays untouched.
    storage = torch.full((200, 3008), float("nan"), dtype=torch.bfloat16, device="cuda")
    mqajit.mqa_logits(*problem.arguments(), out=storage[:, :3000], variant="baseline")
    torch.cuda.synchronize()
    assert torch.equal(storage[:, :3000], mqajit.mqa_logits(*problem.arguments(), variant="baseline").to(torch.bfloat16))
    assert torch.isnan(storage[:, 3000:]).all()


@pytest.mark.parametrize("logits_dtype", [torch.float32, torch.bfloat16] if torch else [None])
def test_compressed_rows_hold_the_dense_rows_from_each_start(logits_dtype):
    problem = Problem(300, 64, 4000, "packed", seed=47)
    expected, inside = torch_reference(problem, clean_logits=False)
    dense = mqajit.fp8_mqa_logits(*problem.arguments(), clean_logits=False)
    starts = problem.cu_starts.long().clamp(0, 4000)
    lengths = (problem.cu_ends.long().clamp(0, 4000) - starts).clamp(min=0)
    max_seqlen_k = int(lengths.max())
    logits = mqajit.fp8_fp4_mqa_logits((problem.q, None), (problem.kv, problem.kv_scales), problem.weights,
                                       problem.cu_starts, problem.cu_ends, clean_logits=False,
                                       max_seqlen_k=max_seqlen_k, logits_dtype=logits_dtype)
    torch.cuda.synchronize()
    assert tuple(logits.shape) == (300, max_seqlen_k) and logits.dtype == logits_dtype
    columns = torch.arange(max_seqlen_k, device="cuda")
    valid = columns[None, :] < lengths[:, None]
    source = (starts[:, None] + columns[None, :]).clamp(max=3999)
    assert torch.equal(logits[valid], dense.gather(1, source)[valid].to(logits_dtype))
    assert calc_diff(logits[valid].float(), expected.gather(1, source)[valid]) < (1e-5 if logits_dtype == torch.float32
                                                                                   else 1e-3)
    # A caller's padded output, poisoned: nothing lands past max_seqlen_k.
    storage = torch.full((300, max_seqlen_k + 16), float("nan"), dtype=logits_dtype, device="cuda")
    mqajit.mqa_logits(*problem.arguments(), clean_logits=False, out=storage[:, :max_seqlen_k],
                      max_seqlen_k=max_seqlen_k)
    torch.cuda.synchronize()
    assert torch.equal(storage[:, :max_seqlen_k][valid], logits[valid])
    assert torch.isnan(storage[:, max_seqlen_k:]).all()


def test_num_sms_caps_keep_the_results_bitwise():
    problem = Problem(1024, 32, 8192, "causal", seed=53)
    uncapped = mqajit.mqa_logits(*problem.arguments())
    sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    try:
        for cap in (1, 7, sms // 2, sms):
            mqajit.set_num_sms(cap)
            assert mqajit.get_num_sms() == cap
            capped = mqajit.mqa_logits(*problem.arguments())
            torch.cuda.synchronize()
            assert torch.equal(capped, uncapped), f"num_sms={cap}"
        with pytest.raises(ValueError, match="SMs"):
            mqajit.set_num_sms(sms + 1)
    finally:
        mqajit.set_num_sms(0)
    assert mqajit.get_num_sms() == sms


def _op_or_skip():
    registered, reason = mqajit.torch_op_available()
    if not registered:
        pytest.skip(reason)


def test_the_torch_ops_fake_implementation_matches_the_real_output():
    _op_or_skip()
    problem = Problem(64, 32, 1000, "random", seed=59)
    q, (kv, scales), weights, starts, ends = problem.arguments()
    # NOTES: the fake implementation against the real output (shape, dtype, strides); the schema
    # checks would compare float8 inputs with ops torch may not have for float8.
    torch.library.opcheck(torch.ops.mqajit.mqa_logits.default, (q, kv, scales, weights, starts, ends, True),
                          test_utils="test_faketensor")


def test_torch_compile_traces_through_the_op():
    _op_or_skip()
    problem = Problem(256, 32, 4096, "causal", seed=61)
    expected, inside = torch_reference(problem, clean_logits=False)

    @torch.compile(fullgraph=True)
    def windowed_sums(q, kv, kv_scales, weights, cu_starts, cu_ends, inside):
        logits = torch.ops.mqajit.mqa_logits(q, kv, kv_scales, weights, cu_starts, cu_ends, False)
        return logits, torch.where(inside, logits, 0.0).sum(dim=-1)

    q, (kv, scales), weights, starts, ends = problem.arguments()
    logits, sums = windowed_sums(q, kv, scales, weights, starts, ends, inside)
    torch.cuda.synchronize()
    assert calc_diff(logits[inside], expected[inside]) < 1e-5
    assert logits.stride(0) % mqajit._ops.ROW_ALIGN_ELEMENTS == 0
    assert_sums_of(logits, inside, sums)

    def cleaned_maximum(*arguments):
        return torch.ops.mqajit.mqa_logits(*arguments, True).amax(dim=-1)

    maximum = torch.compile(cleaned_maximum, fullgraph=True)(q, kv, scales, weights, starts, ends)
    torch.cuda.synchronize()
    # The graph's result is the op's own (bitwise: the kernel reruns exactly); against the fp32
    # reference, single fp8-accumulated elements may differ by ~5e-4 of the largest |logit|.
    eager = torch.ops.mqajit.mqa_logits(q, kv, scales, weights, starts, ends, True).amax(dim=-1)
    assert torch.equal(maximum, eager)
    reference = torch_reference(problem)[0]
    assert torch.allclose(maximum, reference.amax(dim=-1), rtol=0, atol=1e-3 * float(reference[inside].abs().max()))


def test_pdl_keeps_the_results_bitwise_eagerly_and_in_a_graph():
    problem = Problem(1024, 32, 8192, "causal", seed=59)
    plain = mqajit.mqa_logits(*problem.arguments())
    outs = [torch.empty_like(plain) for _ in range(3)]
    try:
        mqajit.set_pdl(True)
        assert mqajit.get_pdl()
        eager = mqajit.mqa_logits(*problem.arguments())
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):  # back-to-back launches: each may start while the one before ends
            for out in outs:
                mqajit.mqa_logits(*problem.arguments(), out=out)
        for out in outs:
            out.fill_(math.nan)
        graph.replay()
        torch.cuda.synchronize()
    finally:
        mqajit.set_pdl(False)
    assert not mqajit.get_pdl()
    assert torch.equal(eager, plain)
    for out in outs:
        assert torch.equal(out, plain)
