"""mqa_topk against the unfused path's lower bound (issue 16's bar), on one GPU.

    PYTHONPATH=build/python python3 python/benchmarks/topk_time.py [--json FILE] [--long]

Per shape (causal windows, D=128, k=2048, clean_logits=False), each timed with
triton.testing.do_bench (L2 flushed before every run, median), interleaved over `--rounds`:
  logits       mqajit.mqa_logits
  bar          mqa_logits plus one read of its logits (a row max): the unfused path's lower bound
  fused        mqajit.mqa_topk (k=2048, path="fused"), keys in key order (the default)
  unfused      mqajit.mqa_topk (k=2048, path="unfused")
  fused_sorted mqajit.mqa_topk (k=2048, path="fused", sorted=True), keys by logit
  torch_topk   mqa_logits plus torch.topk(k=2048), for reference
--long adds S = 1024 and 4096 over N = 65536, 131072, 262144 and 1048576: mqa_topk's time and peak memory
(torch.cuda.max_memory_allocated over the inputs) with its default 512 MiB workspace, both paths.
--profile adds, per shape, the fused path's time per kernel (torch.profiler over 10 calls on the timed
shape's own inputs, each after an L2 flush, queued back to back as do_bench queues them), and per call
the sum of its kernels and its span (first kernel's start to last kernel's end): a span above the sum
is the GPU idle inside a call.
--fused-variant HEADS=NAME (repeatable) adds `fused_variant`: the fused path with that twgmma kernel.
--graph adds `fused_graph` and `bar_graph`: the same calls captured once in a CUDA graph and replayed (no host
time inside the timed span), and `fused_host_us`: the host time of one fused call (wall time of 20 calls
queued behind a long GPU job, so no call waits for the GPU).
--heads 32,64 keeps the shapes of those head counts.
"""

import argparse
import json
import statistics
import time

import torch
import triton.testing

import mqajit
from side_by_side import graphed  # the same capture as the side-by-side script's (this folder)

# S >= 1024 shapes in the range of the GLM-5 (H=32) table, and issue 12's H=64 shapes: a subset of
# the tuned tables' shapes (none with N > 32768).
H32_SHAPES = [(s, n) for n in (4096, 8192, 16384, 32768) for s in (1024, 2048, 4096) if s <= n] + [(8192, 8192)]
H64_SHAPES = [(1024, 8192), (4096, 16384), (2048, 32768), (4096, 32768)]


def problem(seq_len, num_kv, heads):
    q = torch.randn(seq_len, heads, 128, device="cuda").to(torch.float8_e4m3fn)
    kv = torch.randn(num_kv, 128, device="cuda").to(torch.float8_e4m3fn)
    scales = torch.rand(num_kv, device="cuda") + 0.5
    weights = torch.randn(seq_len, heads, device="cuda")
    starts = torch.zeros(seq_len, dtype=torch.int32, device="cuda")
    ends = (num_kv - seq_len + 1 + torch.arange(seq_len, device="cuda")).int()
    return q, (kv, scales), weights, starts, ends


def host_us(call, calls=20):
    """Host time of one call: `calls` calls queued behind a GPU job longer than all of them, so none
    waits for the GPU (a full launch queue would)."""
    call()
    torch.cuda.synchronize()
    torch.cuda._sleep(int(1e9))  # about half a second of GPU time at Hopper's clocks
    start = time.perf_counter()
    for _ in range(calls):
        call()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return 1e6 * elapsed / calls


def time_shape(args, k, rounds, fused_variant=None, graph=False):
    seq_len = args[0].shape[0]
    logits = mqajit.mqa_logits(*args, clean_logits=False)
    indices = torch.empty(seq_len, k, dtype=torch.int32, device="cuda")
    calls = {
        "logits": lambda: mqajit.mqa_logits(*args, clean_logits=False, out=logits),
        "bar": lambda: (mqajit.mqa_logits(*args, clean_logits=False, out=logits), logits.amax(dim=1)),
        "fused": lambda: mqajit.mqa_topk(*args, k=k, out=indices, path="fused"),
        "unfused": lambda: mqajit.mqa_topk(*args, k=k, out=indices, path="unfused"),
        "fused_sorted": lambda: mqajit.mqa_topk(*args, k=k, out=indices, sorted=True, path="fused"),
        "torch_topk": lambda: (mqajit.mqa_logits(*args, clean_logits=False, out=logits), torch.topk(logits, k, dim=1)),
    }
    if graph:
        for name in ("fused", "bar"):
            calls[name + "_graph"] = graphed(calls[name])
    if fused_variant:
        calls["fused_variant"] = lambda: mqajit.mqa_topk(*args, k=k, out=indices, path="fused", variant=fused_variant)
    samples = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            samples[name].append(1000 * triton.testing.do_bench(call, warmup=25, rep=100, return_mode="median"))
    result = {name: min(values) for name, values in samples.items()}
    if graph:
        result["fused_host_us"] = host_us(calls["fused"])
    return result


def profile_fused(args, k, calls=10):
    """Device time per kernel name of the fused path, averaged over `calls` calls, and each call's kernel
    sum and span, under do_bench's conditions: the same inputs, an L2 flush before every call, calls
    queued back to back."""
    seq_len = args[0].shape[0]
    indices = torch.empty(seq_len, k, dtype=torch.int32, device="cuda")
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    mqajit.mqa_topk(*args, k=k, out=indices, path="fused")
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profiler:
        for _ in range(calls):
            flush.zero_()
            mqajit.mqa_topk(*args, k=k, out=indices, path="fused")
        torch.cuda.synchronize()
    kernels = sorted((e for e in profiler.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                     key=lambda e: e.time_range.start)
    per_kernel, per_call, current = {}, [], None
    for event in kernels:
        if "Fill" in event.name:  # the flush: the next call starts after it
            current = None
            continue
        if current is None:
            current = {"sum": 0.0, "start": event.time_range.start, "end": event.time_range.end}
            per_call.append(current)
        current["sum"] += event.device_time_total
        current["end"] = max(current["end"], event.time_range.end)
        name = event.name[:48]
        per_kernel[name] = per_kernel.get(name, 0.0) + event.device_time_total / calls
    sums = [c["sum"] for c in per_call]
    spans = [c["end"] - c["start"] for c in per_call]
    return per_kernel, {"kernel_sum_us": statistics.median(sums), "span_us": statistics.median(spans),
                        "calls": len(per_call)}


def long_context(heads, k):
    rows = []
    for seq_len in (1024, 4096):
        for num_kv in (65536, 131072, 262144, 1048576):
            torch.cuda.empty_cache()
            args = problem(seq_len, num_kv, heads)
            indices = torch.empty(seq_len, k, dtype=torch.int32, device="cuda")
            for path in ("fused", "unfused"):
                torch.cuda.synchronize()
                base = torch.cuda.memory_allocated()
                torch.cuda.reset_peak_memory_stats()
                mqajit.mqa_topk(*args, k=k, out=indices, path=path)
                torch.cuda.synchronize()
                peak = torch.cuda.max_memory_allocated() - base
                us = 1000 * triton.testing.do_bench(lambda: mqajit.mqa_topk(*args, k=k, out=indices, path=path),
                                                    warmup=2, rep=20, return_mode="median")
                rows.append(dict(heads=heads, seq_len=seq_len, seq_len_kv=num_kv, path=path, topk_us=us,
                                 peak_extra_mib=peak / 2**20, logits_mib=seq_len * num_kv * 4 / 2**20))
                print(f"long H={heads} S={seq_len} N={num_kv} {path}: mqa_topk {us:.0f} us, peak memory beyond the "
                      f"inputs and outputs {peak / 2**20:.0f} MiB (the whole logits would be "
                      f"{seq_len * num_kv * 4 / 2**20:.0f} MiB)", flush=True)
            del args, indices
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--long", action="store_true")
    parser.add_argument("--k", type=int, default=2048)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--graph", action="store_true")
    parser.add_argument("--heads", default="32,64")
    parser.add_argument("--fused-variant", action="append", default=[], metavar="HEADS=NAME")
    options = parser.parse_args()
    fused_variants = {int(h): name for h, name in (item.split("=", 1) for item in options.fused_variant)}
    print(f"{torch.cuda.get_device_name()}, k={options.k}, causal, clean_logits=False, do_bench median (L2 flushed), "
          f"best of {options.rounds} rounds", flush=True)
    print("  H     S      N  logits us   bar us  fused us  unfused us  f.sorted us  torch.topk us  fused/bar  "
          "unfused/bar  f.sorted/bar  fused/torch", flush=True)
    rows = []
    requested_heads = {h.strip() for h in options.heads.split(",")}
    if not requested_heads <= {"32", "64"}:
        parser.error(f"--heads is {options.heads}; the shapes are for 32 and 64 heads (e.g. --heads 64)")
    wanted_heads = {int(h) for h in requested_heads}
    for heads, shapes in ((32, H32_SHAPES), (64, H64_SHAPES)):
        if heads not in wanted_heads:
            continue
        for seq_len, num_kv in shapes:
            args = problem(seq_len, num_kv, heads)
            print(f"    [{time.strftime('%H:%M:%S')}] H={heads} S={seq_len} N={num_kv}", flush=True)
            t = time_shape(args, options.k, options.rounds, fused_variants.get(heads), options.graph)
            rows.append(dict(heads=heads, seq_len=seq_len, seq_len_kv=num_kv, **t))
            print(f"{heads:3d} {seq_len:5d} {num_kv:6d} {t['logits']:10.1f} {t['bar']:8.1f} {t['fused']:9.1f} "
                  f"{t['unfused']:11.1f} {t['fused_sorted']:12.1f} {t['torch_topk']:14.1f} {t['fused'] / t['bar']:10.3f} "
                  f"{t['unfused'] / t['bar']:12.3f} {t['fused_sorted'] / t['bar']:13.3f} "
                  f"{t['fused'] / t['torch_topk']:12.3f}", flush=True)
            if options.graph:
                print(f"    graph replay: fused {t['fused_graph']:.1f} us, bar {t['bar_graph']:.1f} us, fused/bar "
                      f"{t['fused_graph'] / t['bar_graph']:.3f}; host time of one fused call {t['fused_host_us']:.1f} us",
                      flush=True)
            if "fused_variant" in t:
                print(f"    fused with {fused_variants[heads]}: {t['fused_variant']:.1f} us, "
                      f"{t['fused_variant'] / t['fused']:.3f} x the default fused, "
                      f"{t['fused_variant'] / t['bar']:.3f} x the bar", flush=True)
            if options.profile:
                kernels, spans = profile_fused(args, options.k)
                rows[-1]["fused_kernels_us"] = kernels
                rows[-1]["fused_call_profile"] = spans
                parts = ", ".join(f"{name} {us:.1f}" for name, us in sorted(kernels.items(), key=lambda item: -item[1]))
                print(f"    fused per kernel (us): {parts}; per call: kernel sum {spans['kernel_sum_us']:.1f}, span "
                      f"{spans['span_us']:.1f} (median of {spans['calls']}), do_bench {t['fused']:.1f}", flush=True)
            del args
    for heads in sorted(wanted_heads):
        for path in ("fused", "unfused"):
            ratios = [r[path] / r["bar"] for r in rows if r["heads"] == heads]
            print(f"H={heads}: {path} / bar geometric mean {statistics.geometric_mean(ratios):.3f}", flush=True)
    long_rows = long_context(32, options.k) + long_context(64, options.k) if options.long else []
    if options.json:
        with open(options.json, "w") as f:
            json.dump(dict(rows=rows, long=long_rows), f, indent=1)


if __name__ == "__main__":
    main()
