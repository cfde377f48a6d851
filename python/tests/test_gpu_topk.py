"""GPU tests of mqajit.mqa_topk against mqa_logits followed by a sort in torch (run by test_gpu.py)."""

import math

from test_gpu import Problem, mqajit, pytest, pytestmark, torch  # noqa: F401


def expected_topk(logits, problem, k, sorted_by_logit=False):
    """Indices and values by the documented rule: the selection by logit descending (equal logits by
    key ascending), then in key order unless sorted_by_logit."""
    num_kv = logits.shape[1]
    starts = problem.cu_starts.long().clamp(0, num_kv)
    ends = problem.cu_ends.long().clamp(0, num_kv)
    columns = torch.arange(num_kv, device=logits.device)
    inside = (columns >= starts[:, None]) & (columns < ends[:, None])
    masked = logits.masked_fill(~inside, -math.inf)
    order = torch.sort(masked, dim=1, descending=True, stable=True).indices[:, :k].int()
    values = masked.gather(1, order.long())
    counts = (ends - starts).clamp(min=0)
    empty = torch.arange(order.shape[1], device=logits.device)[None, :] >= counts[:, None]
    order, values = order.masked_fill(empty, -1), values.masked_fill(empty, -math.inf)
    if not sorted_by_logit:  # taken keys ascending, the empty slots (-1) last
        keyed = order.masked_fill(empty, torch.iinfo(torch.int32).max)
        positions = torch.sort(keyed, dim=1).indices
        order, values = order.gather(1, positions), values.gather(1, positions)
    return order, values, masked


def fused_available():
    return torch.cuda.get_device_capability() == (9, 0)


@pytest.mark.parametrize("path", ["unfused", "fused"])
@pytest.mark.parametrize("sorted_by_logit", [False, True])
@pytest.mark.parametrize("heads", [32, 64])
@pytest.mark.parametrize("rows, num_kv, windows, k, workspace_rows", [
    (256, 4096, "causal", 2048, None),
    (100, 3000, "random", 2048, 7),   # windows narrower and wider than k, empty ones, many passes
    (64, 5000, "packed", 512, 10),
    (33, 2500, "causal", 1, None),
    (64, 40000, "causal", 2048, None),  # past the fused path's candidate buffer: sampled thresholds
    (48, 20000, "random", 1024, 5),
    (24, 12000, "causal", 4096, None),  # k past 2048: the larger selection area and candidate slots
    (16, 70000, "causal", 2048, None),  # windows past one 65,536-key ranking segment
])
def test_topk_matches_a_sort_of_mqa_logits(heads, rows, num_kv, windows, k, workspace_rows, sorted_by_logit, path):
    if path == "fused" and not fused_available():
        pytest.skip("the fused path runs on sm_90a only")
    problem = Problem(rows, heads, num_kv, windows, seed=rows + num_kv + heads)
    logits = mqajit.mqa_logits(*problem.arguments(), clean_logits=False)
    workspace_bytes = None
    if workspace_rows is not None:
        row_bytes = mqajit._mqajit.mqa_topk_row_bytes(num_kv)
        fixed = mqajit._mqajit.mqa_topk_workspace_bytes(rows, num_kv, k, 1 << 40) - rows * row_bytes
        workspace_bytes = (fixed if path == "fused" else 0) + workspace_rows * row_bytes
    report = {}
    indices, values = mqajit.mqa_topk(*problem.arguments(), k=k, return_logits=True, workspace_bytes=workspace_bytes,
                                      sorted=sorted_by_logit, path=path, report=report)
    assert report["kernel"].startswith("fused ") == (path == "fused")
    want_indices, want_values, masked = expected_topk(logits[:, :num_kv], problem, k, sorted_by_logit)
    assert torch.equal(indices, want_indices)
    assert torch.equal(values, want_values)
    # The same values torch.topk finds, wherever the window holds at least k keys.
    full = (want_indices >= 0).all(dim=1)
    if full.any():
        reference = torch.topk(masked[full], min(k, num_kv), dim=1).values
        assert torch.equal(values[full].sort(dim=1, descending=True).values, reference)


def test_equal_logits_across_the_kth_place_keep_the_smaller_keys():
    problem = Problem(16, 32, 3000, "causal", seed=5)
    problem.kv[1:] = problem.kv[0]  # every key the same bytes and scale: each row's logits all equal
    problem.kv_scales[1:] = problem.kv_scales[0]
    indices = mqajit.mqa_topk(*problem.arguments(), k=100)
    assert torch.equal(indices, torch.arange(100, dtype=torch.int32, device="cuda").expand(16, 100))


def test_out_is_written_and_returned():
    problem = Problem(8, 64, 1000, "random", seed=9)
    out = (torch.full((8, 50), 7, dtype=torch.int32, device="cuda"),
           torch.full((8, 50), math.nan, device="cuda"))
    indices, values = mqajit.mqa_topk(*problem.arguments(), k=50, out=out, return_logits=True)
    assert indices is out[0] and values is out[1]
    logits = mqajit.mqa_logits(*problem.arguments(), clean_logits=False)
    want_indices, want_values, _ = expected_topk(logits[:, :1000], problem, 50)
    assert torch.equal(indices, want_indices) and torch.equal(values, want_values)


def test_bad_arguments_say_what_is_wrong():
    problem = Problem(4, 32, 100, "causal")
    with pytest.raises(ValueError, match="at most 4096 keys"):
        mqajit.mqa_topk(*problem.arguments(), k=5000)
    with pytest.raises(ValueError, match="k is 0"):
        mqajit.mqa_topk(*problem.arguments(), k=0)
    with pytest.raises(ValueError, match="pair"):
        mqajit.mqa_topk(problem.q, problem.kv, problem.weights, problem.cu_starts, problem.cu_ends)
    with pytest.raises(ValueError, match="path is 'fast'"):
        mqajit.mqa_topk(*problem.arguments(), k=5, path="fast")
    with pytest.raises(ValueError, match="return_logits"):
        mqajit.mqa_topk(*problem.arguments(), k=5, out=torch.empty(4, 5, dtype=torch.int32, device="cuda"),
                        return_logits=True)


@pytest.mark.parametrize("path, num_kv", [("unfused", 5000), ("fused", 5000), ("fused", 40000)])
def test_a_cuda_graph_replays_with_new_inputs(path, num_kv):
    if path == "fused" and not fused_available():
        pytest.skip("the fused path runs on sm_90a only")
    shape = dict(num_rows=96, heads=64, num_kv=num_kv, windows="random")
    static = Problem(**shape, seed=11)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # torch's recipe: warm up on a side stream before capture
        mqajit.mqa_topk(*static.arguments(), k=2048, path=path)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured, captured_values = mqajit.mqa_topk(*static.arguments(), k=2048, path=path, return_logits=True)
    for seed in (12, 13):
        fresh = Problem(**shape, seed=seed)
        for name in ("q", "kv", "kv_scales", "weights", "cu_starts", "cu_ends"):
            getattr(static, name).copy_(getattr(fresh, name))
        captured.fill_(-7)
        captured_values.fill_(math.nan)
        graph.replay()
        torch.cuda.synchronize()
        logits = mqajit.mqa_logits(*fresh.arguments(), clean_logits=False)
        want_indices, want_values, _ = expected_topk(logits[:, :num_kv], fresh, 2048)
        assert torch.equal(captured, want_indices)
        assert torch.equal(captured_values, want_values)


@pytest.mark.parametrize("path", ["unfused", "fused"])
def test_pdl_keeps_the_selection(path):
    if path == "fused" and not fused_available():
        pytest.skip("the fused path runs on sm_90a only")
    problem = Problem(num_rows=512, heads=32, num_kv=8192, windows="causal", seed=17)
    plain = mqajit.mqa_topk(*problem.arguments(), k=2048, path=path)
    try:
        mqajit.set_pdl(True)
        with_pdl = mqajit.mqa_topk(*problem.arguments(), k=2048, path=path)
        torch.cuda.synchronize()
    finally:
        mqajit.set_pdl(False)
    assert torch.equal(with_pdl, plain)
