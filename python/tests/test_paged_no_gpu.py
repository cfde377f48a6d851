"""paged_mqa_logits from Python without a GPU: the binding's checks on view tuples, the torch-level
wrappers with fake tensors (allocation, defaults, DeepGEMM's call form), and what reaches the
missing driver. Run with pytest, or as a plain script."""

import mqajit
from mqajit import _mqajit, _paged

from fake_torch import CPU, CUDA0, CUDA1, FLOAT32, FLOAT8, INT32, UINT8, FakeTensor, FakeTorch
from helpers import expect_error, main, message_of, skip

# B = 3 requests of next_n = 2 tokens, DeepSeek-V3.2's H = 64, D = 128, 10 blocks of 64 tokens.
B, NEXT_N, H, D, BLOCK_KV, BLOCKS, MAX_BLOCKS = 3, 2, 64, 128, 64, 10, 4
MAX_CONTEXT = 250


def good_views():
    return {
        "q": (0x100000, "float8_e4m3", (B, NEXT_N, H, D), (NEXT_N * H * D, H * D, D, 1)),
        "kv_cache": (0x200000, "uint8", (BLOCKS, BLOCK_KV, 1, D + 4), (BLOCK_KV * (D + 4), D + 4, D + 4, 1)),
        "weights": (0x300000, "float32", (B * NEXT_N, H), (H, 1)),
        "context_lens": (0x400000, "int32", (B,), (1,)),
        "block_table": (0x500000, "int32", (B, MAX_BLOCKS), (MAX_BLOCKS, 1)),
        "logits": (0x600000, "float32", (B * NEXT_N, MAX_CONTEXT), (256, 1)),
    }


def call_with(**changes):
    views = good_views()
    views.update(changes)
    return lambda: _mqajit.paged_mqa_logits(**views)


def fake_problem(**changes):
    tensors = dict(q=FakeTensor(FLOAT8, (B, NEXT_N, H, D)), kv_cache=FakeTensor(UINT8, (BLOCKS, BLOCK_KV, 1, D + 4)),
                   weights=FakeTensor(FLOAT32, (B * NEXT_N, H)), context_lens=FakeTensor(INT32, (B,)),
                   block_table=FakeTensor(INT32, (B, MAX_BLOCKS)))
    tensors.update(changes)
    return tensors


def no_gpu():
    if mqajit.runtime_status().gpu_available:
        skip("a GPU is present: made-up addresses must not reach a kernel")


def test_views_with_wrong_shapes_are_value_errors_that_say_what_fits():
    expect_error(ValueError, call_with(weights=(0x300000, "float32", (B, H), (H, 1))), "weights", "B * next_n from q")
    expect_error(ValueError, call_with(kv_cache=(0x200000, "uint8", (BLOCKS, BLOCK_KV, 1, D), (BLOCK_KV * D, D, D, 1))),
                 "kv_cache", "D + 4")
    expect_error(ValueError, call_with(block_table=(0x500000, "int32", (B, 3), (3, 1))), "block_table", "3 x 64 = 192",
                 "max_context_len = 250")
    expect_error(ValueError, call_with(context_lens=(0x400000, "int32", (B, 3), (3, 1))), "context_lens",
                 "next_n from q")
    expect_error(ValueError, call_with(kv_cache=(0x200000, "float8_e4m3", (BLOCKS, BLOCK_KV, 1, D + 4),
                                                 (BLOCK_KV * (D + 4), D + 4, D + 4, 1))), "kv_cache", "uint8")


def test_sizes_the_kernels_lack_are_of_kind_unsupported():
    error = expect_error(ValueError, call_with(q=(0x100000, "float8_e4m3", (B, 5, H, D), (5 * H * D, H * D, D, 1)),
                                               weights=(0x300000, "float32", (B * 5, H), (H, 1)),
                                               logits=(0x600000, "float32", (B * 5, MAX_CONTEXT), (256, 1))),
                         "next_n = 5", "1 to 4")
    assert error.kind == "unsupported"


def test_valid_views_reach_the_missing_driver():
    no_gpu()
    for call in (call_with(), lambda: _mqajit.paged_mqa_logits_reference(**good_views())):
        error = expect_error(RuntimeError, call)
        assert error.kind != "invalid argument"


def test_the_torch_wrapper_allocates_padded_float32_rows_and_passes_the_mode():
    no_gpu()
    torch = FakeTorch().install()
    expect_error(RuntimeError, lambda: mqajit.paged_mqa_logits(**fake_problem(), max_context_len=MAX_CONTEXT))
    sizes, strides, dtype, device = torch.allocations[-1]
    assert sizes == (B * NEXT_N, MAX_CONTEXT) and strides == (256, 1) and dtype is FLOAT32 and device == CUDA0
    # DeepGEMM's form: the metadata is an empty int32 tensor, accepted and unused.
    meta = mqajit.get_paged_mqa_logits_metadata(FakeTensor(INT32, (B,)), BLOCK_KV, 132)
    assert meta.shape == (0,) and meta.dtype is INT32
    problem = fake_problem()
    expect_error(RuntimeError, lambda: mqajit.fp8_paged_mqa_logits(
        problem["q"], problem["kv_cache"], problem["weights"], problem["context_lens"], problem["block_table"], meta,
        MAX_CONTEXT))
    assert torch.allocations[-1][0] == (B * NEXT_N, MAX_CONTEXT)


def test_the_torch_wrapper_says_what_is_missing_or_misplaced():
    FakeTorch().install()
    expect_error(ValueError, lambda: mqajit.paged_mqa_logits(**fake_problem(block_table=None), max_context_len=10),
                 "block_table is None", "[B, max_blocks]")
    expect_error(ValueError, lambda: mqajit.paged_mqa_logits(**fake_problem(context_lens=FakeTensor(INT32, (B,),
                                                                                                   device=CPU)),
                                                             max_context_len=10), "context_lens is on cpu")
    expect_error(ValueError, lambda: mqajit.paged_mqa_logits(**fake_problem(), max_context_len=-1), "max_context_len")
    expect_error(ValueError, lambda: mqajit.paged_mqa_logits(**fake_problem(), max_context_len=0),
                 "max_context_len is 0", "at least 1")
    # An out of another width would be written at its own width, whatever max_context_len says.
    for width in (1, MAX_CONTEXT):
        out = FakeTensor(FLOAT32, (B * NEXT_N, 100))
        expect_error(ValueError, lambda: mqajit.paged_mqa_logits(**fake_problem(), max_context_len=width, out=out),
                     f"out has 100 columns but max_context_len is {width}")
    expect_error(ValueError, lambda: mqajit.get_paged_mqa_logits_metadata(FakeTensor(INT32, (B,)), 0, 132),
                 "block_kv is 0")


class PagedCheckedPathSpy:
    """Counts the calls _paged_fast_call hands to the checked path (_paged._call)."""

    def __init__(self):
        self.calls = 0

    def __enter__(self):
        def checked(*args):
            self.calls += 1
            return _paged._call(*args)

        _mqajit._set_paged_checked_path(checked)
        return self

    def __exit__(self, *exc):
        _mqajit._set_paged_checked_path(_paged._call)


def test_a_valid_call_takes_the_fast_path_reads_the_uint8_cache_and_reaches_the_missing_driver():
    no_gpu()
    torch = FakeTorch().install()
    for function in (mqajit.paged_mqa_logits, mqajit.paged_mqa_logits_reference):
        torch.allocations.clear()
        with PagedCheckedPathSpy() as spy:
            error = expect_error(RuntimeError, lambda: function(**fake_problem(), max_context_len=MAX_CONTEXT))
        assert error.kind not in ("invalid argument", "unsupported"), error
        assert spy.calls == 0, function
        assert torch.allocations == [((B * NEXT_N, MAX_CONTEXT), (256, 1), FLOAT32, CUDA0)]
    out = FakeTensor(FLOAT32, (B * NEXT_N, MAX_CONTEXT), (MAX_CONTEXT + 6, 1))
    torch.allocations.clear()
    with PagedCheckedPathSpy() as spy:
        expect_error(RuntimeError, lambda: mqajit.paged_mqa_logits(**fake_problem(), max_context_len=MAX_CONTEXT,
                                                                   out=out, report={}))
    assert spy.calls == 0 and torch.allocations == []


# Each bad argument, and the fragment of the library's message that names it: the fast path's
# ValueError is the checked path's.
PAGED_LIBRARY_REJECTS = [
    (dict(weights=FakeTensor(FLOAT32, (B, H))), "B * next_n from q"),
    (dict(kv_cache=FakeTensor(UINT8, (BLOCKS, BLOCK_KV, 1, D))), "D + 4"),
    (dict(block_table=FakeTensor(INT32, (B, 3))), "block_table"),
    (dict(context_lens=FakeTensor(INT32, (B, 3))), "next_n from q"),
    (dict(kv_cache=FakeTensor(FLOAT8, (BLOCKS, BLOCK_KV, 1, D + 4))), "uint8"),
    (dict(q=FakeTensor(FLOAT32, (B, NEXT_N, H, D))), "q"),
]


def test_the_library_checks_every_fast_paged_call_with_the_checked_paths_messages():
    FakeTorch().install()
    for changes, fragment in PAGED_LIBRARY_REJECTS:
        problem = fake_problem(**changes)
        with PagedCheckedPathSpy() as spy:
            fast = message_of(lambda: mqajit.paged_mqa_logits(**problem, max_context_len=MAX_CONTEXT))
        checked = message_of(lambda: _paged._call("paged_mqa_logits", *problem.values(), MAX_CONTEXT, False, None,
                                                  None, None, False))
        assert spy.calls == 0 and fast == checked, (changes, fast, checked)
        assert fast[0] == "ValueError" and fragment in fast[1], (fragment, fast)


def test_unusual_paged_calls_go_to_the_checked_path_which_says_what_is_wrong():
    FakeTorch().install()
    handed_over = [
        (dict(q=None), {}, "q is None"),
        (dict(q=object()), {}, "q is not a torch tensor (got object); pass a float8_e4m3fn CUDA tensor [B, next_n"),
        (dict(block_table=object()), {}, "block_table is not a torch tensor"),
        (dict(context_lens=FakeTensor(INT32, (B,), device=CPU)), {}, "context_lens is on cpu"),
        (dict(weights=FakeTensor(FLOAT32, (B * NEXT_N, H), device=CUDA1)), {}, "weights is on cuda:1 but q is on cuda:0"),
        ({}, dict(max_context_len=-1), "max_context_len is -1"),
        ({}, dict(out=FakeTensor(FLOAT32, (B * NEXT_N, MAX_CONTEXT), device=CUDA1)), "paged_out is on cuda:1"),
    ]
    for changes, keywords, fragment in handed_over:
        arguments = dict(fake_problem(**changes), max_context_len=MAX_CONTEXT)
        arguments.update(keywords)
        with PagedCheckedPathSpy() as spy:
            expect_error(ValueError, lambda: mqajit.paged_mqa_logits(**arguments), fragment)
        assert spy.calls == 1, (changes, keywords)
    for unusual in (dict(report=[]), dict(variant=7), dict(max_context_len=float(MAX_CONTEXT))):
        arguments = dict(fake_problem(), max_context_len=MAX_CONTEXT)
        arguments.update(unusual)
        with PagedCheckedPathSpy() as spy:
            message_of(lambda: mqajit.paged_mqa_logits(**arguments))
        assert spy.calls == 1, unusual
    expect_error(TypeError, lambda: _mqajit._paged_fast_call("paged_mqa_logits"), "12 positional arguments")


if __name__ == "__main__":
    main(globals())
