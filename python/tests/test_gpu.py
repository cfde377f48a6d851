"""GPU tests of the Python binding against a torch reference (fp32 on the dequantized fp8 inputs).

Needs torch with CUDA and pytest; run `python3 test_gpu.py` (ctest does) or `pytest test_gpu.py`
with PYTHONPATH=<build>/python. Run as a script without torch, CUDA or pytest, it exits 77, which
ctest reports as skipped.
"""

import math
import re
import subprocess
import sys
from pathlib import Path

try:
    import pytest
except ImportError:
    pytest = None
try:
    import torch
except ImportError:
    torch = None

import mqajit

SKIP_EXIT_CODE = 77
D = 128


def _problem_reason():
    missing = [name for name, module in (("torch", torch), ("pytest", pytest)) if module is None]
    if missing:
        return f"{' and '.join(missing)} not importable by {sys.executable}"
    if not hasattr(torch, "float8_e4m3fn"):
        return f"torch {torch.__version__} has no float8_e4m3fn (torch 2.1 or newer has)"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    if not mqajit.runtime_status().gpu_available:
        return f"mqajit sees no GPU: {mqajit.runtime_status()}"
    return None


if pytest is not None:
    pytestmark = pytest.mark.skipif(_problem_reason() is not None, reason=str(_problem_reason()))


class Problem:
    """Inputs of one call; windows as int32 [S] tensors, possibly reaching outside [0, N)."""

    def __init__(self, num_rows, heads, num_kv, windows, head_dim=D, seed=0):
        generator = torch.Generator(device="cpu").manual_seed(seed)
        def random(*shape):
            return torch.randn(*shape, generator=generator).cuda()
        self.q = random(num_rows, heads, head_dim).to(torch.float8_e4m3fn)
        self.kv = random(num_kv, head_dim).to(torch.float8_e4m3fn)
        self.kv_scales = (torch.rand(num_kv, generator=generator) + 0.5).cuda()
        self.weights = random(num_rows, heads)
        starts, ends = make_windows(windows, num_rows, num_kv, generator)
        self.cu_starts = starts.to(torch.int32).cuda()
        self.cu_ends = ends.to(torch.int32).cuda()

    def arguments(self):
        return self.q, (self.kv, self.kv_scales), self.weights, self.cu_starts, self.cu_ends


def make_windows(kind, num_rows, num_kv, generator):
    rows = torch.arange(num_rows)
    if kind == "causal":  # the queries are the last num_rows of num_kv tokens
        return torch.zeros(num_rows, dtype=torch.int64), (num_kv - num_rows + 1 + rows).clamp(0, num_kv)
    if kind == "random":  # anywhere, some empty, some reaching outside [0, N) (the library clamps)
        low, high = -num_kv // 4 - 1, num_kv + num_kv // 4 + 2
        a = torch.randint(low, high, (num_rows,), generator=generator)
        b = torch.randint(low, high, (num_rows,), generator=generator)
        starts, ends = torch.minimum(a, b), torch.maximum(a, b)
        ends[::7] = starts[::7]
        return starts, ends
    if kind == "packed":  # requests packed back to back, each query causal within its own request
        num_requests = max(1, min(4, num_rows, num_kv))
        query_bounds = [num_rows * r // num_requests for r in range(num_requests + 1)]
        kv_bounds = [num_kv * r // num_requests for r in range(num_requests + 1)]
        starts = torch.empty(num_rows, dtype=torch.int64)
        ends = torch.empty(num_rows, dtype=torch.int64)
        for r in range(num_requests):
            q0, q1, k0, k1 = query_bounds[r], query_bounds[r + 1], kv_bounds[r], kv_bounds[r + 1]
            position = torch.arange(q1 - q0)
            starts[q0:q1] = k0
            ends[q0:q1] = (k1 - (q1 - q0) + 1 + position).clamp(min=k0, max=k1)
        return starts, ends
    raise ValueError(kind)


def torch_reference(problem, clean_logits=True):
    # NOTES: full fp32 products; TF32 (10-bit mantissas) would be the less exact side.
    torch.backends.cuda.matmul.allow_tf32 = False
    q, kv = problem.q.float(), problem.kv.float()
    num_rows, num_kv = q.shape[0], kv.shape[0]
    logits = torch.empty(num_rows, num_kv, device=q.device)
    rows_per_chunk = max(1, (1 << 26) // (q.shape[1] * num_kv))
    for first in range(0, num_rows, rows_per_chunk):
        chunk = slice(first, first + rows_per_chunk)
        scores = torch.einsum("shd,nd->shn", q[chunk], kv).relu()
        logits[chunk] = torch.einsum("shn,sh->sn", scores, problem.weights[chunk]) * problem.kv_scales
    columns = torch.arange(num_kv, device=q.device)
    starts = problem.cu_starts.long().clamp(0, num_kv)[:, None]
    ends = problem.cu_ends.long().clamp(0, num_kv)[:, None]
    inside = (columns >= starts) & (columns < ends)
    return logits.masked_fill(~inside, -math.inf) if clean_logits else logits, inside


def calc_diff(x, y):
    x, y = x.double(), y.double()
    denominator = (x * x + y * y).sum()
    return 0.0 if denominator == 0 else float(1 - 2 * (x * y).sum() / denominator)


def assert_sums_of(logits, inside, sums):
    """The compiled graph's row sums are those of the logits it returned, up to the summation
    order (the op's own error against the reference is calc_diff's business: single fp8 elements
    differ by up to ~5e-4 of the largest, which cancellation in a sum of ~1e3 makes large)."""
    visible = torch.where(inside, logits, 0.0)
    tolerance = 1e-5 * visible.abs().sum(dim=-1) + 1e-3
    assert bool(((sums - visible.sum(dim=-1)).abs() <= tolerance).all()), "compiled sums differ from the logits'"


def check(actual, expected):
    assert actual.shape == expected.shape
    assert not torch.isnan(actual).any(), "NaN in the logits"
    assert torch.equal(torch.isneginf(actual), torch.isneginf(expected)), "the -inf pattern differs"
    finite = torch.isfinite(expected)
    difference = calc_diff(actual[finite], expected[finite])
    assert difference < 1e-5, f"calc_diff {difference}"


SHAPES = [  # (S, H, N, windows)
    (1, 32, 1, "causal"),
    (1, 64, 4097, "causal"),
    (64, 32, 1, "random"),
    (128, 32, 4097, "random"),
    (300, 64, 2048, "packed"),
    (517, 32, 4097, "packed"),
    (256, 32, 16384, "random"),
    (1024, 64, 8192, "causal"),
]


@pytest.mark.parametrize("num_rows,heads,num_kv,windows", SHAPES) if pytest else (lambda f: f)
@pytest.mark.parametrize("variant", [None, "baseline"]) if pytest else (lambda f: f)
def test_matches_the_torch_reference(num_rows, heads, num_kv, windows, variant):
    problem = Problem(num_rows, heads, num_kv, windows, seed=num_rows + num_kv)
    expected, _ = torch_reference(problem)
    report = {}
    actual = mqajit.mqa_logits(*problem.arguments(), variant=variant, report=report)
    torch.cuda.synchronize()
    check(actual, expected)
    assert report["kernel"] and report["reason"]
    if variant == "baseline":
        assert report["kernel"] == "baseline"


def test_head_dim_64_and_the_reference_kernel():
    problem = Problem(200, 32, 3000, "causal", head_dim=64, seed=3)
    expected, _ = torch_reference(problem)
    check(mqajit.mqa_logits(*problem.arguments()), expected)
    check(mqajit.mqa_logits_reference(*problem.arguments()), expected)


def test_both_call_forms_and_keywords_agree():
    problem = Problem(96, 64, 1500, "random", seed=11)
    paired = mqajit.mqa_logits(*problem.arguments())
    separate = mqajit.mqa_logits(problem.q, problem.kv, problem.kv_scales, problem.weights, problem.cu_starts,
                                 problem.cu_ends, True)
    named = mqajit.mqa_logits(q=problem.q, kv=(problem.kv, problem.kv_scales), weights=problem.weights,
                              cu_starts=problem.cu_starts, cu_ends=problem.cu_ends, clean_logits=True)
    torch.cuda.synchronize()
    assert torch.equal(paired, separate) and torch.equal(paired, named)


def test_padded_out_rows_are_used_and_their_padding_left_alone():
    num_rows, num_kv, padding = 77, 1000, 37
    problem = Problem(num_rows, 32, num_kv, "packed", seed=5)
    expected, _ = torch_reference(problem)
    storage = torch.full((num_rows, num_kv + padding), 7.0, device="cuda")
    out = storage[:, :num_kv]
    assert mqajit.mqa_logits(*problem.arguments(), out=out) is out
    torch.cuda.synchronize()
    check(out, expected)
    assert torch.all(storage[:, num_kv:] == 7.0)

    allocated = mqajit.mqa_logits(*problem.arguments())
    assert tuple(allocated.shape) == (num_rows, num_kv) and allocated.stride(1) == 1
    assert allocated.stride(0) >= num_kv and allocated.stride(0) % mqajit._ops.ROW_ALIGN_ELEMENTS == 0
    check(allocated, expected)


@pytest.mark.parametrize("variant", [None, "baseline"]) if pytest else (lambda f: f)
def test_one_row_with_the_strides_torch_leaves_free_on_size_1_dimensions(variant):
    # torch counts a [1, H, D] tensor with strides (D, D, 1) as contiguous, and a column of an [S, 2]
    # tensor has stride 2: the library takes such strides as dense (the q tensor map among them).
    problem = Problem(1, 32, 3000, "random", seed=13)
    expected, _ = torch_reference(problem)
    problem.q = problem.q.reshape(32, 1, D).transpose(0, 1)
    problem.weights = problem.weights.reshape(32, 1).t()
    windows = torch.stack([problem.cu_starts, problem.cu_ends], dim=1)
    problem.cu_starts, problem.cu_ends = windows[:, 0], windows[:, 1]
    assert problem.q.stride() == (D, D, 1) and problem.weights.stride() == (1, 1) and problem.cu_starts.stride() == (2,)
    out = torch.full((1, 3000), math.nan, device="cuda")
    mqajit.mqa_logits(*problem.arguments(), out=out, variant=variant)
    torch.cuda.synchronize()
    check(out, expected)


def test_without_clean_logits_the_window_values_match():
    problem = Problem(64, 32, 2048, "random", seed=9)
    expected, inside = torch_reference(problem, clean_logits=False)
    actual = mqajit.mqa_logits(*problem.arguments(), clean_logits=False)
    torch.cuda.synchronize()
    assert calc_diff(actual[inside], expected[inside]) < 1e-5


def _delay(stream):
    # NOTES: torch.cuda._sleep spins the GPU for a number of clock cycles (about 50 ms here); it is
    # what torch's own stream tests use to keep a stream busy.
    with torch.cuda.stream(stream):
        torch.cuda._sleep(100_000_000)


def test_runs_on_the_current_stream_after_an_event_without_host_sync():
    problem = Problem(256, 32, 4096, "causal", seed=21)
    expected, _ = torch_reference(problem)
    mqajit.mqa_logits(*problem.arguments())  # warm: compile and load before timing matters
    late_scales = torch.full_like(problem.kv_scales, math.nan)
    producer, consumer = torch.cuda.Stream(), torch.cuda.Stream()
    producer.wait_stream(torch.cuda.current_stream())
    consumer.wait_stream(torch.cuda.current_stream())
    _delay(producer)
    with torch.cuda.stream(producer):
        late_scales.copy_(problem.kv_scales)
    ready = producer.record_event()
    consumer.wait_event(ready)
    with torch.cuda.stream(consumer):
        out = mqajit.mqa_logits(problem.q, (problem.kv, late_scales), problem.weights, problem.cu_starts,
                                problem.cu_ends)
        # Had the call waited for the host or run on another stream, the delay would be over or
        # the NaN scales read.
        assert not consumer.query(), "the call synchronized the host with its stream"
    consumer.synchronize()
    check(out, expected)


def test_cuda_graph_capture_replays_with_new_inputs():
    shape = dict(num_rows=333, heads=64, num_kv=5000, windows="packed")
    static = Problem(**shape, seed=1)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # torch's recipe: warm up on a side stream before capture
        mqajit.mqa_logits(*static.arguments())
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = mqajit.mqa_logits(*static.arguments())
    for seed in (2, 3):
        fresh = Problem(**shape, seed=seed)
        for name in ("q", "kv", "kv_scales", "weights", "cu_starts", "cu_ends"):
            getattr(static, name).copy_(getattr(fresh, name))
        captured.fill_(math.nan)
        graph.replay()
        torch.cuda.synchronize()
        check(captured, torch_reference(fresh)[0])


def test_tensors_on_another_device_run_there():
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    with torch.cuda.device(1):
        problem = Problem(100, 32, 2000, "causal", seed=4)
    assert torch.cuda.current_device() == 0
    actual = mqajit.mqa_logits(*problem.arguments())
    assert actual.device == problem.q.device
    torch.cuda.synchronize(1)
    check(actual, torch_reference(problem)[0])


def test_bad_tensors_are_value_errors():
    problem = Problem(8, 32, 64, "causal")
    q, (kv, scales), weights, starts, ends = problem.arguments()
    with pytest.raises(ValueError, match="q has dtype bfloat16"):
        mqajit.mqa_logits(q.to(torch.bfloat16), (kv, scales), weights, starts, ends)
    with pytest.raises(ValueError, match="cu_starts has dtype int64"):
        mqajit.mqa_logits(q, (kv, scales), weights, starts.long(), ends)
    transposed = torch.empty(D, kv.shape[0], device="cuda").to(torch.float8_e4m3fn).t()
    with pytest.raises(ValueError, match="dense"):
        mqajit.mqa_logits(q, (transposed, scales), weights, starts, ends)
    with pytest.raises(ValueError, match="is on cpu"):
        mqajit.mqa_logits(q, (kv, scales.cpu()), weights, starts, ends)
    with pytest.raises(ValueError, match="N from kv"):
        mqajit.mqa_logits(q, (kv, scales[:-1]), weights, starts, ends)


def test_lookup_defaults_to_the_live_device():
    properties = torch.cuda.get_device_properties(torch.cuda.current_device())
    device = mqajit.device_info()
    assert device["cu_num"] == properties.multi_processor_count
    shape = dict(heads=32, head_dim=128, seq_len=4096, seq_len_kv=8192)
    assert mqajit.lookup(**shape) == mqajit.lookup(arch=device["arch"], cu_num=device["cu_num"], **shape)
    assert mqajit.explain(**shape).shape["arch"] == device["arch"]


def test_the_prefill_example_runs_and_agrees_with_torch():
    example = Path(__file__).resolve().parents[2] / "examples/python/indexer_prefill.py"
    result = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    agreement = re.search(r"agreement with torch: ([0-9.]+)%", result.stdout)
    assert agreement and float(agreement.group(1)) > 99.0, result.stdout


if __name__ == "__main__":
    reason = _problem_reason()
    if reason is not None:
        print(f"SKIPPED Python GPU tests: {reason}")
        sys.exit(SKIP_EXIT_CODE)
    surface = str(Path(__file__).with_name("test_gpu_surface.py"))
    paged = str(Path(__file__).with_name("test_gpu_paged.py"))
    topk = str(Path(__file__).with_name("test_gpu_topk.py"))
    sys.exit(pytest.main([__file__, surface, paged, topk, "-q", "-p", "no:cacheprovider"]))
