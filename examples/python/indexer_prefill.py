"""A vLLM-style prefill chunk through the lightning indexer, then top-k per query row.

Several requests are packed into one chunk: each brings the tokens already in its KV cache plus
the new tokens of this chunk, and each new token attends (causally) to its own request only. The
indexer scores every cached token for every new token; top-k of each row picks the tokens sparse
attention will read. The same step runs twice, with mqajit's logits and with pure-torch logits,
timed with CUDA events (warm-up, then the median of several runs).

    PYTHONPATH=build/python python3 examples/python/indexer_prefill.py [--heads 64] [--topk 2048]
"""

import argparse
import math
import statistics

import torch

import mqajit

HEAD_DIM = 128
# NOTES: vLLM pads each logits row (here to 256 columns) so that the buffer can be reused across
# chunks of nearby sizes; mqajit writes into the [S, N] view and never touches the padding.
LOGITS_ROW_ALIGN = 256


class Chunk:
    """q [S, H, D] and kv [N, D] in fp8, with each query's window into the packed kv."""

    def __init__(self, requests, heads, device):
        starts, ends = [], []
        kv_offset = 0
        for cached, new in requests:
            for t in range(new):
                starts.append(kv_offset)
                ends.append(kv_offset + cached + t + 1)
            kv_offset += cached + new
        num_rows, num_kv = len(starts), kv_offset
        self.q = torch.randn(num_rows, heads, HEAD_DIM, device=device).to(torch.float8_e4m3fn)
        self.kv = torch.randn(num_kv, HEAD_DIM, device=device).to(torch.float8_e4m3fn)
        self.kv_scales = torch.rand(num_kv, device=device) + 0.5
        self.weights = torch.randn(num_rows, heads, device=device) * heads ** -0.5
        self.cu_starts = torch.tensor(starts, dtype=torch.int32, device=device)
        self.cu_ends = torch.tensor(ends, dtype=torch.int32, device=device)
        padded = -(-num_kv // LOGITS_ROW_ALIGN) * LOGITS_ROW_ALIGN
        self.logits = torch.empty(num_rows, padded, device=device)[:, :num_kv]


def mqajit_logits(chunk, report=None):
    return mqajit.mqa_logits(chunk.q, (chunk.kv, chunk.kv_scales), chunk.weights, chunk.cu_starts, chunk.cu_ends,
                             clean_logits=True, out=chunk.logits, report=report)


def torch_logits(chunk, rows_per_chunk=256):
    kv = chunk.kv.float()
    num_kv = kv.shape[0]
    columns = torch.arange(num_kv, device=kv.device)
    for first in range(0, chunk.q.shape[0], rows_per_chunk):
        rows = slice(first, first + rows_per_chunk)
        scores = torch.einsum("shd,nd->shn", chunk.q[rows].float(), kv).relu_()
        logits = torch.einsum("shn,sh->sn", scores, chunk.weights[rows]) * chunk.kv_scales
        inside = (columns >= chunk.cu_starts[rows, None]) & (columns < chunk.cu_ends[rows, None])
        chunk.logits[rows] = logits.masked_fill_(~inside, -math.inf)
    return chunk.logits


def select_topk(logits, k):
    values, indices = logits.topk(min(k, logits.shape[1]), dim=-1)
    return indices.masked_fill_(values == -math.inf, -1)  # a short window has fewer than k tokens


def median_ms(step, warmup=3, runs=15):
    for _ in range(warmup):
        step()
    times = []
    for _ in range(runs):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def topk_overlap(a, b, num_kv):
    """Share of the tokens `a` selected that `b` selected too (fp8 products summed in another
    order can swap near-ties). Entries are token indices in [0, num_kv) or -1."""
    picked = torch.zeros(a.shape[0], num_kv + 1, dtype=torch.bool, device=a.device)
    picked.scatter_(1, a + 1, True)  # column 0 collects the -1 fillers
    both = picked.gather(1, b + 1) & (b != -1)
    return int(both.sum()) / max(int((a != -1).sum()), 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--heads", type=int, default=32, choices=(32, 64), help="32: GLM-5, 64: DeepSeek-V3.2")
    parser.add_argument("--topk", type=int, default=2048)
    arguments = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit(f"no CUDA device for torch; mqajit says: {mqajit.runtime_status()}")

    # (tokens already cached, new tokens in this chunk) for each request
    requests = [(8192, 1024), (0, 2048), (12000, 512), (3000, 512)]
    torch.manual_seed(0)
    chunk = Chunk(requests, arguments.heads, "cuda")
    num_rows, num_kv = chunk.logits.shape
    print(f"chunk: {len(requests)} requests, S={num_rows} query tokens, N={num_kv} kv tokens, "
          f"H={arguments.heads}, D={HEAD_DIM}, logits row stride {chunk.logits.stride(0)}")

    report = {}
    ours = select_topk(mqajit_logits(chunk, report).clone(), arguments.topk)  # the first call may compile
    print(f"mqajit kernel: {report['kernel']} ({report['reason']})")
    reference = select_topk(torch_logits(chunk).clone(), arguments.topk)
    print(f"top-{arguments.topk} agreement with torch: {100 * topk_overlap(ours, reference, num_kv):.3f}%")

    timings = {
        "mqajit logits": median_ms(lambda: mqajit_logits(chunk)),
        "mqajit logits + topk": median_ms(lambda: select_topk(mqajit_logits(chunk), arguments.topk)),
        "torch logits": median_ms(lambda: torch_logits(chunk)),
        "torch logits + topk": median_ms(lambda: select_topk(torch_logits(chunk), arguments.topk)),
    }
    for name, ms in timings.items():
        print(f"{name:<22} {ms:9.3f} ms")
    print(f"speed-up of the indexer step: {timings['torch logits + topk'] / timings['mqajit logits + topk']:.1f}x")


if __name__ == "__main__":
    main()
