"""The fast call (python/src/fast_call.cpp) against the checked path (mqajit/_checked.py), with
fake torch tensors and no GPU: the same bindings, the same checks, the same messages, and the
unusual calls handed to the checked path. Run with pytest, or as a plain script."""

import mqajit
from mqajit import _arguments, _checked, _mqajit, _torch_hooks

from fake_torch import (BFLOAT16, CPU, CUDA0, CUDA1, D, FLOAT16, FLOAT32, FLOAT8, H, INT32, INT8, N, S, FakeTensor,
                        FakeTorch, problem)
from helpers import expect_error, main, message_of, skip

ROW_STRIDE = 128  # N = 100 float32 columns, rows padded to a multiple of 128 bytes


class CheckedPathSpy:
    """Counts the calls the fast entries hand to the checked path."""

    def __init__(self):
        self.bound = self.unbound = 0

    def __enter__(self):
        def bound(*args):
            self.bound += 1
            return _checked.call(*args)

        def unbound(*args, **kwargs):
            self.unbound += 1
            return _checked.mqa_logits(*args, **kwargs)

        def unbound_reference(*args, **kwargs):
            self.unbound += 1
            return _checked.mqa_logits_reference(*args, **kwargs)

        _mqajit._set_checked_paths(bound, unbound, unbound_reference)
        return self

    def __exit__(self, *exc):
        _mqajit._set_checked_paths(_checked.call, _checked.mqa_logits, _checked.mqa_logits_reference)


class Unbooleanable:
    def __bool__(self):
        raise TypeError("no truth value")


def no_gpu_here():
    if mqajit.runtime_status().gpu_available:
        skip("a GPU is present: fake addresses must not reach a kernel")


def reaches_the_missing_driver(call):
    """A valid call gets past every check and fails only where the library looks for the GPU."""
    try:
        call()
    except RuntimeError as error:
        assert error.kind not in ("invalid argument", "unsupported"), error
        return str(error)
    except ValueError as error:
        raise AssertionError(f"the call was rejected: {error}") from None
    raise AssertionError("the call succeeded without a GPU")


def test_a_valid_call_takes_the_fast_path_allocates_padded_rows_and_reaches_the_library():
    no_gpu_here()
    torch = FakeTorch().install()
    t = problem()
    with CheckedPathSpy() as spy:
        reaches_the_missing_driver(lambda: mqajit.mqa_logits(t["q"], (t["kv"], t["kv_scales"]), t["weights"],
                                                             t["cu_starts"], t["cu_ends"]))
    assert (spy.bound, spy.unbound) == (0, 0)
    assert torch.allocations == [((S, N), (ROW_STRIDE, 1), FLOAT32, CUDA0)]
    assert torch.streams == [0]
    assert mqajit._ops.ROW_ALIGN_ELEMENTS == 32


def test_without_the_library_the_fast_path_returns_its_logits_unwritten():
    torch = FakeTorch().install()
    t = problem()
    arguments = ("mqa_logits", *t.values(), True, None, 0, None, None, None, False)
    with CheckedPathSpy() as spy:
        logits = _mqajit._fast_call_without_library(*arguments)
        out = FakeTensor(FLOAT32, (S, N))
        assert _mqajit._fast_call_without_library(*arguments[:8], out, *arguments[9:]) is out
        expect_error(RuntimeError, lambda: _mqajit._fast_call_without_library(*arguments[:2], None, *arguments[3:]),
                     "would go to the checked path")
    assert (spy.bound, spy.unbound) == (0, 0)
    assert (logits.shape, logits.stride(), logits.dtype) == ((S, N), (ROW_STRIDE, 1), FLOAT32)
    assert torch.allocations == [((S, N), (ROW_STRIDE, 1), FLOAT32, CUDA0)]


def test_out_is_used_as_given():
    no_gpu_here()
    torch = FakeTorch().install()
    t = problem()
    out = FakeTensor(FLOAT32, (S, N), (N + 7, 1))
    with CheckedPathSpy() as spy:
        reaches_the_missing_driver(lambda: mqajit.mqa_logits(*t.values(), out=out))
    assert (spy.bound, spy.unbound, torch.allocations) == (0, 0, [])


# Each bad argument, and the fragment of the library's message that names it; every one is a
# ValueError from the fast path, with the checked path's message.
LIBRARY_REJECTS = [
    (dict(q=FakeTensor(FLOAT32, (S, H, D))), "q has dtype float32"),
    (dict(kv=FakeTensor(FLOAT8, (N, 64))), "head_dim D from q"),
    (dict(kv_scales=FakeTensor(FLOAT32, (N + 1,))), "kv_scales"),
    (dict(weights=FakeTensor(FLOAT32, (S, H + 1))), "H from q"),
    (dict(cu_starts=FakeTensor(INT32, (S + 1,))), "cu_starts"),
    (dict(cu_ends=FakeTensor(FLOAT32, (S,))), "cu_ends has dtype float32"),
    (dict(kv=FakeTensor(FLOAT8, (N, D), (D, 2))), "dense"),
    (dict(q=FakeTensor(FLOAT8, (S, 48, D)), weights=FakeTensor(FLOAT32, (S, 48))), "48 heads"),
    (dict(q=FakeTensor(FLOAT8, (S, H, D), address=0)), "q is a null pointer"),
    (dict(kv=FakeTensor(FLOAT8, (N, D), address=0x20000008)), "16-byte"),
    (dict(q=FakeTensor(FLOAT8, (S, H, D, 1))), "q has 4 dimensions"),
    (dict(q=FakeTensor(BFLOAT16, (S, H, D))), "q has dtype bfloat16"),
]


def test_the_library_checks_every_fast_call_with_the_checked_paths_messages():
    FakeTorch().install()
    for changes, fragment in LIBRARY_REJECTS:
        t = problem(**changes)
        fast = message_of(lambda: mqajit.mqa_logits(*t.values()))
        checked = message_of(lambda: _checked.mqa_logits(*t.values()))
        assert fast == checked, (changes, fast, checked)
        assert fast[0] == "ValueError" and fragment in fast[1], (fragment, fast)


# Calls the fast path hands over, and what the checked path says about each.
HANDED_OVER = [
    (dict(q=None), "q is None"),
    (dict(weights=None), "weights is None"),
    (dict(q=object()), "q is not a torch tensor (got object)"),
    (dict(kv_scales=object()), "kv_scales is not a torch tensor"),
    (dict(cu_starts=FakeTensor(INT32, (S,), device=CPU)), "cu_starts is on cpu"),
    (dict(weights=FakeTensor(FLOAT32, (S, H), device=CUDA1)), "weights is on cuda:1 but q is on cuda:0"),
    (dict(kv=FakeTensor(FLOAT16, (N, D))), "kv has dtype float16; it must be float8_e4m3"),
    (dict(kv=FakeTensor(INT8, (N, D))), "packed FP4"),
]


def test_unusual_calls_go_to_the_checked_path_which_says_what_is_wrong():
    FakeTorch().install()
    for changes, fragment in HANDED_OVER:
        t = problem(**changes)
        with CheckedPathSpy() as spy:
            error = expect_error(ValueError, lambda: mqajit.mqa_logits(*t.values()), fragment)
        assert spy.bound == 1, changes
        assert str(error) == message_of(lambda: _checked.mqa_logits(*t.values()))[1]
    t = problem()
    out = FakeTensor(FLOAT32, (S, N), device=CUDA1)
    expect_error(ValueError, lambda: mqajit.mqa_logits(*t.values(), out=out), "out is on cuda:1 but q is on cuda:0")
    for unusual in (dict(report=[]), dict(variant=7), dict(clean_logits=Unbooleanable())):
        with CheckedPathSpy() as spy:
            message_of(lambda: mqajit.mqa_logits(*t.values(), **unusual))
        assert spy.bound == 1, unusual


def test_without_torch_the_checked_path_says_so():
    _torch_hooks.install(None)
    original_load = _torch_hooks.load
    try:
        def no_torch(function_name="mqa_logits"):
            raise RuntimeError(f"mqajit.{function_name} takes torch tensors, but PyTorch is not importable here")
        _torch_hooks.load = no_torch
        t = problem()
        expect_error(RuntimeError, lambda: mqajit.mqa_logits(*t.values()), "PyTorch is not importable")
        expect_error(RuntimeError, lambda: mqajit.fp8_mqa_logits(t["q"], (t["kv"], t["kv_scales"]), t["weights"],
                                                                 t["cu_starts"], t["cu_ends"]),
                     "mqajit.fp8_mqa_logits takes torch tensors")
    finally:
        _torch_hooks.load = original_load
        _torch_hooks.install(None)


def test_a_device_that_is_not_the_current_one_is_switched_to_by_the_checked_path():
    no_gpu_here()
    torch = FakeTorch(current_device=0).install()
    t = problem(**{name: FakeTensor(v.dtype, v.shape, device=CUDA1) for name, v in problem().items()})
    with CheckedPathSpy() as spy:
        reaches_the_missing_driver(lambda: mqajit.mqa_logits(*t.values()))
    assert spy.bound == 1 and torch.guards == [CUDA1] and torch.streams == [1]
    assert torch.allocations == [((S, N), (ROW_STRIDE, 1), FLOAT32, CUDA1)]


# Call forms: (positional, keywords) for the separate and the paired form; each binds the same names.
def call_forms(t):
    q, kv, scales, weights, starts, ends = t.values()
    return [
        ((q, kv, scales, weights, starts, ends), {}),
        ((q, kv, scales, weights, starts, ends, True), {}),
        ((q, kv, scales, weights, starts, ends, True, None), {}),
        ((q, (kv, scales), weights, starts, ends), {}),
        ((q, (kv, scales), weights, starts, ends, True, None), {}),
        ((q, (kv, scales)), dict(weights=weights, cu_starts=starts, cu_ends=ends)),
        ((), dict(q=q, kv=(kv, scales), weights=weights, cu_starts=starts, cu_ends=ends, clean_logits=True)),
        ((q,), dict(kv=kv, kv_scales=scales, weights=weights, cu_starts=starts, cu_ends=ends)),
        ((q, kv, scales), dict(cu_ends=ends, weights=weights, cu_starts=starts, out=None)),
        ((q, (kv, scales), weights, starts, ends), dict(variant=None, report=None, max_seqlen_k=0)),
    ]


def test_every_call_form_binds_each_tensor_to_its_name():
    FakeTorch().install()
    names = ("q", "kv", "kv_scales", "weights", "cu_starts", "cu_ends")
    bad = dict(q=FakeTensor(FLOAT8, (S, 40, D)), kv=FakeTensor(FLOAT8, (N, 64)), kv_scales=FakeTensor(FLOAT32, (N, 1)),
               weights=FakeTensor(FLOAT32, (S, H, 1)), cu_starts=FakeTensor(INT32, (S, 1)),
               cu_ends=FakeTensor(INT32, (S + 2,)))
    for name in names:  # one argument wrong at a time: the library's message must name it
        t = problem(**{name: bad[name]})
        for args, kwargs in call_forms(t):
            kind, message, _ = message_of(lambda: mqajit.mqa_logits(*args, **kwargs))
            assert kind == "ValueError" and message.split()[0] == name, (name, args, kwargs, message)
            assert message == message_of(lambda: _checked.mqa_logits(*args, **kwargs))[1]


def test_calls_that_do_not_bind_raise_pythons_own_type_errors():
    FakeTorch().install()
    t = problem()
    q, kv, scales, weights, starts, ends = t.values()
    cases = [
        ((q, (kv, scales), weights, starts, ends), dict(kv_scales=scales), "(kv, kv_scales)"),
        ((q, kv, scales), dict(kv_scales=scales), "multiple values"),
        ((q, (kv, scales), 1, 2, 3, 4, 5, 6), {}, "at most 7"),
        ((q, (kv, scales), weights, starts, ends), dict(q=q), "multiple values for argument 'q'"),
        ((q,), {}, "missing 1 required positional argument: 'kv'"),
        ((q, (kv, scales), weights, starts, ends), dict(colour="red"), "unexpected keyword argument 'colour'"),
    ]
    with CheckedPathSpy() as spy:
        for args, kwargs, fragment in cases:
            expect_error(TypeError, lambda: mqajit.mqa_logits(*args, **kwargs), fragment)
    assert spy.unbound == len(cases)
    expect_error(ValueError, lambda: mqajit.mqa_logits(q, (kv,), weights, starts, ends), "(kv, kv_scales)")
    expect_error(TypeError, lambda: mqajit.mqa_logits_reference(q, (kv, scales), weights, starts, ends, variant="x"),
                 "unexpected keyword argument 'variant'")
    assert _arguments.bind("f", (kv, scales), (weights, starts, ends), {})[:3] == (kv, scales, weights)


def test_bf16_logits_and_compressed_rows_are_allocated_as_asked_and_reach_the_kernels():
    no_gpu_here()
    torch = FakeTorch().install()
    t = problem()
    pair = (t["kv"], t["kv_scales"])
    rest = (t["weights"], t["cu_starts"], t["cu_ends"])
    # Past every check, the call stops only at the missing driver, with the output allocated as asked.
    expect_error(RuntimeError, lambda: mqajit.mqa_logits(t["q"], pair, *rest, logits_dtype=BFLOAT16), "no CUDA device")
    assert torch.allocations[-1] == ((S, N), (128, 1), BFLOAT16, CUDA0)  # 64 bf16 = 128 bytes
    expect_error(RuntimeError, lambda: mqajit.fp8_mqa_logits(t["q"], pair, *rest, clean_logits=False, max_seqlen_k=40),
                 "no CUDA device")
    assert torch.allocations[-1] == ((S, 40), (64, 1), FLOAT32, CUDA0)
    expect_error(RuntimeError, lambda: mqajit.fp8_fp4_mqa_logits((t["q"], None), pair, *rest, clean_logits=False,
                                                                  max_seqlen_k=40, logits_dtype=BFLOAT16),
                 "no CUDA device")
    assert torch.allocations[-1] == ((S, 40), (64, 1), BFLOAT16, CUDA0)
    expect_error(ValueError, lambda: mqajit.fp8_mqa_logits(t["q"], pair, *rest, max_seqlen_k=40),
                 "need clean_logits=False")
    expect_error(ValueError, lambda: mqajit.mqa_logits(t["q"], pair, *rest, logits_dtype=INT32),
                 "logits_dtype is torch.int32")
    out = FakeTensor(FLOAT32, (S, N))
    expect_error(ValueError, lambda: mqajit.mqa_logits(t["q"], pair, *rest, out=out, logits_dtype=BFLOAT16),
                 "out is torch.float32 but logits_dtype is torch.bfloat16")
    expect_error(TypeError, lambda: mqajit.mqa_logits(t["q"], pair, *rest, max_seqlen_k="40"))


def test_deepgemm_surface_takes_deepgemms_keywords_and_refuses_fp4():
    no_gpu_here()
    FakeTorch().install()
    t = problem()
    keywords = dict(q=t["q"], kv=(t["kv"], t["kv_scales"]), weights=t["weights"], cu_seq_len_k_start=t["cu_starts"],
                    cu_seq_len_k_end=t["cu_ends"], clean_logits=False, max_seqlen_k=0)
    with CheckedPathSpy() as spy:
        reaches_the_missing_driver(lambda: mqajit.fp8_mqa_logits(**keywords))
        reaches_the_missing_driver(lambda: mqajit.fp8_fp4_mqa_logits(**{**keywords, "q": (t["q"], None)},
                                                                     logits_dtype=FLOAT32))
        reaches_the_missing_driver(lambda: mqajit.fp8_fp4_mqa_logits((t["q"], None), (t["kv"], t["kv_scales"]),
                                                                     t["weights"], t["cu_starts"], t["cu_ends"], False))
    assert spy.bound == 0
    error = expect_error(ValueError, lambda: mqajit.fp8_fp4_mqa_logits(**{**keywords, "q": (t["q"], t["kv_scales"])}),
                         "q_scale is given, which selects FP4")
    assert error.kind == "unsupported"
    packed = FakeTensor(INT8, (N, D // 2))
    error = expect_error(ValueError, lambda: mqajit.fp8_fp4_mqa_logits(**{**keywords, "q": (t["q"], None),
                                                                          "kv": (packed, t["cu_starts"])}),
                         "kv has dtype torch.int8, which looks like packed FP4")
    assert error.kind == "unsupported"
    expect_error(ValueError, lambda: mqajit.fp8_mqa_logits(**{**keywords, "kv": t["kv"]}),
                 "kv must be a (kv, kv_scales) pair, not FakeTensor")
    expect_error(ValueError, lambda: mqajit.fp8_fp4_mqa_logits(**keywords), "q must be a (q, q_scale) pair")
    expect_error(TypeError, lambda: mqajit.fp8_mqa_logits(**keywords, out=None), "unexpected keyword argument 'out'")


def test_report_is_filled_only_by_a_call_that_ran():
    FakeTorch().install()
    t = problem(cu_ends=FakeTensor(INT32, (S + 1,)))
    report = {}
    expect_error(ValueError, lambda: mqajit.mqa_logits(*t.values(), report=report), "cu_ends")
    assert report == {}


def test_a_torch_reader_reads_the_tensors_and_allocates_the_logits():
    from fake_torch_reader import FakeReader
    torch = FakeTorch()
    reader = FakeReader()
    torch.hooks.reader = reader.capsule
    torch.install()
    t = problem()
    arguments = ("mqa_logits", *t.values(), True, None, 0, None, None, None, False)
    logits = _mqajit._fast_call_without_library(*arguments)
    assert reader.reads == 6 and reader.declined == 0 and torch.allocations == []
    assert reader.allocations == [((S, N), (ROW_STRIDE, 1), FLOAT32, 0)]
    assert (logits.shape, logits.stride(), logits.dtype) == ((S, N), (ROW_STRIDE, 1), FLOAT32)
    out = FakeTensor(BFLOAT16, (S, N))
    assert _mqajit._fast_call_without_library(*arguments[:8], out, *arguments[9:]) is out and reader.reads == 13
    # What the reader declines is read through Python attributes, and checked as before.
    odd = problem(kv_scales=FakeTensor(FLOAT16, (N,)))
    expect_error(ValueError, lambda: mqajit.mqa_logits(*odd.values()), "kv_scales has dtype float16")
    assert reader.declined == 1
    for changes, fragment in LIBRARY_REJECTS:
        bad = problem(**changes)
        assert message_of(lambda: mqajit.mqa_logits(*bad.values())) == \
            message_of(lambda: _checked.mqa_logits(*bad.values())), changes


def test_a_torch_reader_of_another_version_is_not_used():
    from fake_torch_reader import FakeReader
    torch = FakeTorch()
    reader = FakeReader(version=99)
    torch.hooks.reader = reader.capsule
    torch.install()
    t = problem()
    _mqajit._fast_call_without_library("mqa_logits", *t.values(), True, None, 0, None, None, None, False)
    assert reader.reads == 0 and len(torch.allocations) == 1


def test_the_torch_reader_is_used_only_for_the_torch_it_was_built_for():
    import os
    import sys
    import types
    saved_module = sys.modules.pop("mqajit._mqajit_torch", None)
    saved_attribute = vars(mqajit).pop("_mqajit_torch", None)
    try:
        fake = types.SimpleNamespace(reader="capsule", torch_version="2.11.0")
        sys.modules["mqajit._mqajit_torch"] = mqajit._mqajit_torch = fake
        assert _torch_hooks._torch_reader(types.SimpleNamespace(__version__="2.11.1+cu130"))[0] == "capsule"
        reader, reason = _torch_hooks._torch_reader(types.SimpleNamespace(__version__="2.12.0"))
        assert reader is None and "built for torch 2.11.0, this is 2.12.0" in reason
        os.environ["MQAJIT_TORCH_READER"] = "0"
        reader, reason = _torch_hooks._torch_reader(types.SimpleNamespace(__version__="2.11.0"))
        assert reader is None and "MQAJIT_TORCH_READER=0" in reason
    finally:
        os.environ.pop("MQAJIT_TORCH_READER", None)
        sys.modules.pop("mqajit._mqajit_torch", None)
        vars(mqajit).pop("_mqajit_torch", None)
        if saved_module is not None:
            sys.modules["mqajit._mqajit_torch"] = saved_module
        if saved_attribute is not None:
            mqajit._mqajit_torch = saved_attribute


if __name__ == "__main__":
    main(globals())
