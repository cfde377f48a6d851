"""GPU tests of paged_mqa_logits from Python against a torch reference (fp32 on the dequantized
fp8 inputs, keys gathered through the block table): both length layouts, both modes, DeepGEMM's
call form, the torch op under opcheck and torch.compile, and a CUDA graph replayed with new
lengths. test_gpu.py runs this file too (ctest python_gpu)."""

import math

from test_gpu import assert_sums_of, calc_diff, mqajit, pytest, pytestmark, torch  # noqa: F401

D = 128


class PagedProblem:
    """B requests of next_n tokens over a shuffled cache of 64-token blocks, some shared."""

    def __init__(self, batch, next_n, heads, average_context, block_kv=64, lens_2d=False, seed=0):
        generator = torch.Generator(device="cpu").manual_seed(seed)
        self.next_n, self.block_kv = next_n, block_kv
        low, high = max(1, int(0.7 * average_context)), int(1.3 * average_context) + 1
        lens = torch.randint(low, high, (batch,), generator=generator)
        self.max_context_len = int((lens.max() + block_kv - 1) // block_kv * block_kv)
        self.max_blocks = self.max_context_len // block_kv
        num_blocks = batch * self.max_blocks + 3
        self.block_table = torch.randperm(num_blocks, generator=generator)[: batch * self.max_blocks]
        self.block_table = self.block_table.reshape(batch, self.max_blocks).to(torch.int32)
        if batch > 1:
            self.block_table[1, 0] = self.block_table[0, 0]  # requests may share a block
        keys = torch.randn(num_blocks, block_kv, D, generator=generator).to(torch.float8_e4m3fn)
        scales = torch.rand(num_blocks, block_kv, generator=generator) + 0.5
        cache = torch.empty(num_blocks, block_kv * (D + 4), dtype=torch.uint8)
        cache[:, : block_kv * D] = keys.view(torch.uint8).reshape(num_blocks, -1)
        cache[:, block_kv * D:] = scales.view(torch.uint8).reshape(num_blocks, -1)
        self.kv_cache = cache.reshape(num_blocks, block_kv, 1, D + 4).cuda()
        self.keys, self.scales = keys.cuda(), scales.cuda()
        self.q = torch.randn(batch, next_n, heads, D, generator=generator).to(torch.float8_e4m3fn).cuda()
        self.weights = torch.randn(batch * next_n, heads, generator=generator).cuda()
        if lens_2d:
            self.context_lens = (lens[:, None] - next_n + 1 + torch.arange(next_n)[None, :]).clamp(min=0)
            self.context_lens = self.context_lens.to(torch.int32).cuda()
        else:
            self.context_lens = lens.to(torch.int32).cuda()
        self.block_table = self.block_table.cuda()

    def arguments(self):
        return self.q, self.kv_cache, self.weights, self.context_lens, self.block_table, self.max_context_len

    def visible(self):
        """[B * next_n] keys each token sees."""
        batch = self.q.shape[0]
        if self.context_lens.dim() == 2:
            seen = self.context_lens.long()
        else:
            seen = self.context_lens.long()[:, None] - self.next_n + 1 + torch.arange(self.next_n, device="cuda")
        return seen.clamp(0, self.max_context_len).reshape(batch * self.next_n)

    def reference(self, clean_logits):
        torch.backends.cuda.matmul.allow_tf32 = False
        batch, next_n, heads, _ = self.q.shape
        blocks = self.block_table.long()  # [B, max_blocks]
        keys = self.keys.float()[blocks].reshape(batch, self.max_context_len, D)
        scales = self.scales[blocks].reshape(batch, self.max_context_len)
        q = self.q.float().reshape(batch, next_n * heads, D)
        scores = torch.einsum("bxd,bjd->bxj", q, keys).relu().reshape(batch, next_n, heads, self.max_context_len)
        weights = self.weights.reshape(batch, next_n, heads, 1)
        logits = (scores * weights).sum(dim=2) * scales[:, None, :]
        logits = logits.reshape(batch * next_n, self.max_context_len)
        inside = torch.arange(self.max_context_len, device="cuda")[None, :] < self.visible()[:, None]
        return (logits.masked_fill(~inside, -math.inf) if clean_logits else logits), inside


def check(actual, expected, inside, clean_logits):
    assert actual.shape == expected.shape
    assert not torch.isnan(actual[inside]).any(), "NaN where a token sees its key"
    if clean_logits:
        assert torch.equal(torch.isneginf(actual), ~inside), "the -inf pattern differs"
    difference = calc_diff(actual[inside], expected[inside])
    assert difference < 1e-5, f"calc_diff {difference}"


CASES = [  # (B, next_n, H, average context, lens_2d)
    (1, 1, 64, 37, False),
    (3, 2, 64, 1000, True),
    (17, 1, 32, 4097, False),
    (64, 4, 32, 700, True),
    (130, 2, 64, 2000, False),
]


@pytest.mark.parametrize("batch,next_n,heads,context,lens_2d", CASES)
@pytest.mark.parametrize("clean_logits", [False, True])
@pytest.mark.parametrize("variant", [None, "baseline"])
def test_paged_matches_the_torch_reference(batch, next_n, heads, context, lens_2d, clean_logits, variant):
    problem = PagedProblem(batch, next_n, heads, context, lens_2d=lens_2d, seed=batch * 7 + next_n)
    expected, inside = problem.reference(clean_logits)
    report = {}
    actual = mqajit.paged_mqa_logits(*problem.arguments(), clean_logits, variant=variant, report=report)
    torch.cuda.synchronize()
    assert report["kernel"] == (variant or report["kernel"])
    check(actual, expected, inside, clean_logits)
    reference = mqajit.paged_mqa_logits_reference(*problem.arguments(), clean_logits)
    check(reference, expected, inside, clean_logits)


def test_deepgemms_call_form_gives_the_same_bits():
    problem = PagedProblem(32, 2, 64, 3000, seed=5)
    q, cache, weights, lens, table, width = problem.arguments()
    meta = mqajit.get_paged_mqa_logits_metadata(lens, problem.block_kv, 132)
    ours = mqajit.paged_mqa_logits(q, cache, weights, lens, table, width)
    theirs = mqajit.fp8_paged_mqa_logits(q, cache, weights, lens, table, meta, width, clean_logits=False)
    inside = problem.reference(False)[1]
    assert torch.equal(ours[inside], theirs[inside])


def test_a_cuda_graph_replays_with_new_lengths():
    problem = PagedProblem(16, 1, 64, 2000, seed=11)
    arguments = problem.arguments()
    out = torch.empty(16, problem.max_context_len, device="cuda")
    mqajit.paged_mqa_logits(*arguments, True, out)  # the first call compiles and loads outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        mqajit.paged_mqa_logits(*arguments, True, out)
    for step in range(3):
        problem.context_lens.copy_((problem.context_lens.long() * (3 - step) // 3).clamp(min=1).to(torch.int32))
        graph.replay()
        torch.cuda.synchronize()
        expected, inside = problem.reference(True)
        check(out, expected, inside, True)


def test_the_paged_torch_op_traces_under_torch_compile():
    registered, reason = mqajit.torch_op_available()
    if not registered:
        pytest.skip(reason)
    problem = PagedProblem(8, 2, 32, 1500, seed=13)
    torch.library.opcheck(torch.ops.mqajit.paged_mqa_logits.default, problem.arguments() + (False,),
                          test_utils="test_faketensor")
    expected, inside = problem.reference(False)

    @torch.compile(fullgraph=True)
    def visible_sums(q, cache, weights, lens, table, inside):
        logits = torch.ops.mqajit.paged_mqa_logits(q, cache, weights, lens, table, problem.max_context_len, False)
        return logits, torch.where(inside, logits, 0.0).sum(dim=-1)

    q, cache, weights, lens, table, _ = problem.arguments()
    logits, sums = visible_sums(q, cache, weights, lens, table, inside)
    torch.cuda.synchronize()
    assert calc_diff(logits[inside], expected[inside]) < 1e-5
    assert_sums_of(logits, inside, sums)


def test_pdl_keeps_the_bits_eagerly_and_in_a_graph():
    problem = PagedProblem(16, 2, 64, 2000, seed=13)
    arguments = problem.arguments()
    plain = mqajit.paged_mqa_logits(*arguments, True)
    out = torch.full_like(plain, math.nan)
    try:
        mqajit.set_pdl(True)
        eager = mqajit.paged_mqa_logits(*arguments, True)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            mqajit.paged_mqa_logits(*arguments, True, out)
            mqajit.paged_mqa_logits(*arguments, True, out)
        graph.replay()
        torch.cuda.synchronize()
    finally:
        mqajit.set_pdl(False)
    assert torch.equal(eager, plain)
    assert torch.equal(out, plain)
