"""mqajit and DeepGEMM timed in one process on the same inputs (issue 12's prefill rows, issue 13's
decode rows), for docs/PERFORMANCE.md.

    PYTHONPATH=build/python:.deepgemm python3 python/benchmarks/side_by_side.py decode --json out.json
    ... side_by_side.py prefill --json out.json

Each call is a whole Python call (output allocated by the library, as engines call it), or with
`--graphs` that call captured in a CUDA graph and replayed (as engines run decode), timed with
triton.testing.do_bench (the L2 cache flushed before every run, median), the libraries taking
turns in `--rounds` rounds (in the mode `--clean-logits` names; with 1, mqajit's entries outside
the windows are checked to be exactly -inf); a row reports the median of its rounds' medians. DeepGEMM's decode
metadata call is timed on its own. Before timing, the two outputs are compared where a token sees
its key (calc_diff; and the row is marked if they disagree). Without deep_gemm importable, only
mqajit is timed. Floors: prefill max(FLOPs / 1309 TFLOP/s, logits bytes / 4296 GB/s); decode
(keys read x (D + 4) + visible pairs x 4 B) / 4296 GB/s (issue 13)."""

import argparse
import json
import math
import statistics
import sys
import time

import torch
from triton.testing import do_bench

import mqajit

try:
    import deep_gemm
except ImportError as error:  # timed without it; the output says so
    deep_gemm = None
    deep_gemm_error = error

D = 128
BLOCK_KV = 64
BYTES_PER_S = 4296e9
FLOPS_PER_S = 1309e12

PREFILL_ROWS = [(32, s, n) for n in (4096, 8192) for s in (256, 1024, 2048, 4096) if s <= n] + [
    (32, 8192, 8192), (32, 256, 16384), (32, 1024, 16384), (32, 2048, 16384), (32, 4096, 16384),
    (32, 8192, 16384), (32, 256, 32768), (32, 1024, 32768), (32, 2048, 32768), (32, 4096, 32768),
    (32, 256, 49152), (32, 1024, 49152), (32, 2048, 49152), (32, 256, 60000), (32, 1024, 60000),
    (32, 2048, 60000), (64, 256, 4096), (64, 1024, 8192), (64, 4096, 16384), (64, 256, 32768),
    (64, 2048, 32768), (64, 4096, 32768), (64, 2048, 60000)]
DECODE_ROWS = [(h, n, b, c) for h in (64, 32) for n in (1, 2, 3, 4)
               for b, contexts in ((1, (4096, 32768, 131072)), (32, (4096, 32768, 131072)),
                                   (128, (4096, 32768, 131072)), (512, (4096, 32768)), (2048, (4096,)))
               for c in contexts]


def calc_diff(x, y):
    x, y = x.double(), y.double()
    return (1 - 2 * (x * y).sum() / (x * x + y * y).sum()).item()


def warm_up(seconds=2.0):
    """Keeps the GPU busy before the first row: in a fresh process the first decode rows of batch 1
    read 2-3x slow (7.2 then 24.5 us for the same row, H200, 2026-12-03) while the rows after them
    did not."""
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(20):
            a @ a
        torch.cuda.synchronize()


def timed(fn, rounds_out):
    rounds_out.append(do_bench(fn, warmup=10, rep=40, return_mode="median") * 1e3)


def graphed(fn):
    """fn captured in a CUDA graph, as engines run decode: returns the graph's replay, which costs a
    few microseconds of host time, so a timing of it is the GPU's time even where a whole eager call
    costs more host time than the flush before it hides (batch 1)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    torch.cuda.synchronize()
    return graph.replay


def host_us(fn, calls=200):
    """Wall time per call of back-to-back calls with one synchronize at the end: the host's cost
    where the GPU work is shorter than the call."""
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / calls * 1e6


class Prefill:
    def __init__(self, heads, seq_len, seq_len_kv, seed, clean_logits=False):
        self.clean_logits = clean_logits
        g = torch.Generator(device="cuda").manual_seed(seed)
        self.q = torch.randn(seq_len, heads, D, device="cuda", generator=g).to(torch.float8_e4m3fn)
        self.kv = torch.randn(seq_len_kv, D, device="cuda", generator=g).to(torch.float8_e4m3fn)
        self.scales = torch.rand(seq_len_kv, device="cuda", generator=g) + 0.5
        self.weights = torch.randn(seq_len, heads, device="cuda", generator=g)
        self.starts = torch.zeros(seq_len, dtype=torch.int32, device="cuda")
        self.ends = (seq_len_kv - seq_len + 1 + torch.arange(seq_len, device="cuda")).to(torch.int32)
        pairs = int(self.ends.sum())
        self.floor_us = max(pairs * 2 * heads * D / FLOPS_PER_S, seq_len * seq_len_kv * 4 / BYTES_PER_S) * 1e6

    def mqajit(self):
        return mqajit.mqa_logits(self.q, (self.kv, self.scales), self.weights, self.starts, self.ends,
                                 clean_logits=self.clean_logits)

    def deep_gemm(self):
        return deep_gemm.fp8_mqa_logits(self.q, (self.kv, self.scales), self.weights, self.starts, self.ends,
                                        clean_logits=self.clean_logits)

    def inside(self, width):
        return torch.arange(width, device="cuda")[None, :] < self.ends[:, None]


class Decode:
    """B requests, each context uniform in 0.7-1.3x the average, 2-D lengths, a random block table."""

    def __init__(self, heads, next_n, batch, context, seed, clean_logits=False):
        self.clean_logits = clean_logits
        g = torch.Generator(device="cuda").manual_seed(seed)
        lens = torch.randint(int(0.7 * context), int(1.3 * context) + 1, (batch,), device="cuda", generator=g)
        self.max_context_len = int((int(lens.max()) + BLOCK_KV - 1) // BLOCK_KV * BLOCK_KV)
        max_blocks = self.max_context_len // BLOCK_KV
        num_blocks = batch * max_blocks
        self.block_table = torch.randperm(num_blocks, device="cuda", generator=g).reshape(batch, max_blocks).int()
        keys = torch.randn(num_blocks, BLOCK_KV * D, device="cuda", generator=g).to(torch.float8_e4m3fn)
        scales = torch.rand(num_blocks, BLOCK_KV, device="cuda", generator=g) + 0.5
        self.kv_cache = torch.cat([keys.view(torch.uint8), scales.view(torch.uint8)], dim=1)
        self.kv_cache = self.kv_cache.reshape(num_blocks, BLOCK_KV, 1, D + 4)
        del keys, scales
        self.q = torch.randn(batch, next_n, heads, D, device="cuda", generator=g).to(torch.float8_e4m3fn)
        self.weights = torch.randn(batch * next_n, heads, device="cuda", generator=g)
        self.context_lens = (lens[:, None] - next_n + 1 + torch.arange(next_n, device="cuda")[None, :]).int()
        keys_read = int(lens.sum())
        visible = int(self.context_lens.clamp(min=0).sum())
        self.floor_us = (keys_read * (D + 4) + visible * 4) / BYTES_PER_S * 1e6
        self.meta = None

    def mqajit(self):
        return mqajit.paged_mqa_logits(self.q, self.kv_cache, self.weights, self.context_lens, self.block_table,
                                       self.max_context_len, clean_logits=self.clean_logits)

    def mqajit_baseline(self):
        return mqajit.paged_mqa_logits(self.q, self.kv_cache, self.weights, self.context_lens, self.block_table,
                                       self.max_context_len, clean_logits=self.clean_logits, variant="baseline")

    def metadata(self):
        return deep_gemm.get_paged_mqa_logits_metadata(self.context_lens, BLOCK_KV, deep_gemm.get_num_sms())

    def deep_gemm(self):
        if self.meta is None:
            self.meta = self.metadata()
        return deep_gemm.fp8_paged_mqa_logits(self.q, self.kv_cache, self.weights, self.context_lens,
                                              self.block_table, self.meta, self.max_context_len, self.clean_logits)

    def inside(self, width):
        return torch.arange(width, device="cuda")[None, :] < self.context_lens.reshape(-1, 1)


def save(rows, path):
    """Rewritten after every row, so that a run stopped at its time limit keeps the rows it timed."""
    if path:
        with open(path, "w") as f:
            json.dump(rows, f, indent=1)


def run_row(problem, with_deep_gemm, rounds, with_metadata, with_baseline=False, graphs=False, host=False):
    row = {"floor_us": problem.floor_us}
    ours = problem.mqajit()
    if problem.clean_logits:  # every entry outside a row's window exactly -inf
        outside = ~problem.inside(ours.shape[1])
        row["masked_exact"] = bool((ours[outside] == float("-inf")).all())
    if with_deep_gemm:
        theirs = problem.deep_gemm()
        width = min(ours.shape[1], theirs.shape[1])
        inside = problem.inside(width)
        row["calc_diff"] = calc_diff(ours[:, :width][inside], theirs[:, :width][inside])
        del theirs
    del ours
    calls = {"mqajit": problem.mqajit}
    if with_baseline:
        calls["mqajit_baseline"] = problem.mqajit_baseline
    if with_deep_gemm:
        calls["deep_gemm"] = problem.deep_gemm
        if with_metadata:
            calls["metadata"] = problem.metadata
    if host:
        for name, fn in calls.items():
            row[name + "_host_us"] = host_us(fn)
    if graphs:
        calls = {name: graphed(fn) for name, fn in calls.items()}
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            timed(fn, times[name])
    for name, values in times.items():
        if values:
            row[name + "_us"] = statistics.median(values)
            row[name + "_rounds_us"] = values
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("op", choices=("prefill", "decode"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-next-n", type=int, default=4)
    parser.add_argument("--heads", type=int, nargs="*", default=(32, 64))
    parser.add_argument("--batches", type=int, nargs="*", help="decode: only these batch sizes")
    parser.add_argument("--json", help="write the rows here as well")
    parser.add_argument("--clean-logits", type=int, choices=(0, 1), default=0,
                        help="the mode both libraries run in (0, what engines call, by default)")
    parser.add_argument("--with-baseline", action="store_true",
                        help="decode: also time mqajit's pre-built baseline kernel (variant='baseline')")
    parser.add_argument("--graphs", action="store_true",
                        help="time each library's call captured in a CUDA graph (replays), as engines run decode")
    parser.add_argument("--host-time", action="store_true",
                        help="also measure each call's host time (back-to-back eager calls, one synchronize)")
    args = parser.parse_args()
    if deep_gemm is None:
        print(f"deep_gemm not importable ({deep_gemm_error}): timing mqajit alone", flush=True)
    print(f"{torch.cuda.get_device_name()}, mqajit {mqajit.__version__}, "
          f"deep_gemm {getattr(deep_gemm, '__version__', None)}"
          f"{', calls timed as CUDA graph replays' if args.graphs else ''}", flush=True)
    warm_up()
    rows = []
    if args.op == "prefill":
        print(f"clean_logits={args.clean_logits}", flush=True)
        print("H S N | floor us | DeepGEMM us | mqajit us | ratio | mqajit % floor | calc_diff", flush=True)
        for seed, (heads, seq_len, seq_len_kv) in enumerate(PREFILL_ROWS):
            if heads not in args.heads:
                continue
            problem = Prefill(heads, seq_len, seq_len_kv, seed, bool(args.clean_logits))
            row = run_row(problem, deep_gemm is not None, args.rounds, False, graphs=args.graphs, host=args.host_time)
            row.update(heads=heads, seq_len=seq_len, seq_len_kv=seq_len_kv, clean_logits=args.clean_logits)
            rows.append(row)
            save(rows, args.json)
            print_row(f"{heads} {seq_len} {seq_len_kv}", row, False)
            del problem
    else:
        print(f"clean_logits={args.clean_logits}", flush=True)
        print("H next_n batch context | floor us | DeepGEMM us | +metadata us | mqajit us | ratio | "
              "vs kernel+metadata | mqajit % floor | calc_diff", flush=True)
        for seed, (heads, next_n, batch, context) in enumerate(DECODE_ROWS):
            if heads not in args.heads or next_n > args.max_next_n or (args.batches and batch not in args.batches):
                continue
            problem = Decode(heads, next_n, batch, context, seed, bool(args.clean_logits))
            # NOTES: DeepGEMM's sm_90 decode kernel takes next_n 1 and 2 only, and its clean_logits=True
            # asserts 1-D context lengths, which its call asserts are 2-D (2.6.1): mqajit alone there.
            with_deep_gemm = deep_gemm is not None and next_n <= 2 and not args.clean_logits
            row = run_row(problem, with_deep_gemm, args.rounds, True, args.with_baseline, graphs=args.graphs,
                          host=args.host_time)
            row.update(heads=heads, next_n=next_n, batch=batch, context=context, clean_logits=args.clean_logits)
            rows.append(row)
            save(rows, args.json)
            print_row(f"{heads} {next_n} {batch} {context}", row, True)
            del problem
            torch.cuda.empty_cache()
    ratios = [r["mqajit_us"] / r["deep_gemm_us"] for r in rows if "deep_gemm_us" in r]
    if ratios:
        print(f"geometric mean mqajit / DeepGEMM: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f} "
              f"over {len(ratios)} rows", flush=True)


def print_row(label, row, decode):
    ours, theirs = row["mqajit_us"], row.get("deep_gemm_us")
    cells = [label, f"{row['floor_us']:.1f}"]
    if theirs is None:
        cells += ["-", "-"] if decode else ["-"]
        cells += [f"{ours:.1f}"] + (["-", "-"] if decode else ["-"])
    else:
        both = theirs + row.get("metadata_us", 0.0)
        cells += [f"{theirs:.1f}"] + ([f"{both:.1f}"] if decode else [])
        cells += [f"{ours:.1f}", f"{ours / theirs:.3f}"] + ([f"{ours / both:.3f}"] if decode else [])
    cells += [f"{100 * row['floor_us'] / ours:.0f}%", f"{row.get('calc_diff', float('nan')):.1e}"]
    if row.get("masked_exact") is False:
        cells.append("NOT -inf outside the windows")
    if "mqajit_baseline_us" in row:
        cells.append(f"baseline {row['mqajit_baseline_us']:.1f}")
    if "mqajit_host_us" in row:
        cells.append(f"host us mqajit {row['mqajit_host_us']:.1f}"
                     + (f" DeepGEMM {row['deep_gemm_host_us']:.1f}" if "deep_gemm_host_us" in row else ""))
    print(" | ".join(cells), flush=True)


if __name__ == "__main__":
    sys.exit(main())
