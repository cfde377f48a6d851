"""mqa_topk's torch wrapper without a GPU, on fake tensors: what it refuses before the library sees
the call, and a valid call reaching the missing driver. Run with pytest, or as a plain script."""

import mqajit

from fake_torch import FLOAT32, INT32, S, UINT8, FakeTensor, FakeTorch, problem
from helpers import expect_error, main, skip


def call(k=16, **keywords):
    tensors = problem()
    return lambda: mqajit.mqa_topk(tensors["q"], (tensors["kv"], tensors["kv_scales"]), tensors["weights"],
                                   tensors["cu_starts"], tensors["cu_ends"], k=k, **keywords)


def test_an_out_of_another_width_than_k_is_refused():
    # The workspace is sized for k; the library would take k from the out's width instead.
    FakeTorch().install()
    expect_error(ValueError, call(k=16, out=FakeTensor(INT32, (S, 4096))), "out has 4096 columns but k is 16")
    expect_error(ValueError, call(k=16, out=(FakeTensor(INT32, (S, 16)), FakeTensor(FLOAT32, (S, 8))),
                                  return_logits=True), "out's logits has 8 columns but k is 16")


def test_return_logits_needs_both_outputs():
    FakeTorch().install()
    expect_error(ValueError, call(out=(FakeTensor(INT32, (S, 16)), None), return_logits=True),
                 "out is a tuple holding None", "(int32 [S, k], float32 [S, k])")
    expect_error(ValueError, call(out=FakeTensor(INT32, (S, 16)), return_logits=True), "out is FakeTensor")
    expect_error(ValueError, call(out=(FakeTensor(INT32, (S, 16)), FakeTensor(FLOAT32, (S, 16)))), "out is a tuple")


def test_a_valid_out_reaches_the_missing_driver():
    if mqajit.runtime_status().gpu_available:
        skip("a GPU is present: fake addresses must not reach a kernel")
    torch = FakeTorch().install()
    out = (FakeTensor(INT32, (S, 16)), FakeTensor(FLOAT32, (S, 16)))
    error = expect_error(RuntimeError, call(out=out, return_logits=True))
    assert error.kind not in ("invalid argument", "unsupported"), error
    assert [allocation[2] for allocation in torch.allocations] == [UINT8], torch.allocations  # the workspace alone


if __name__ == "__main__":
    main(globals())
