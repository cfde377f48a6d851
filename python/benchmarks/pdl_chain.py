"""Programmatic dependent launch, timed as engines get it: a CUDA graph of back-to-back calls (each
on its own inputs, as the layers of a decode step are), captured once with PDL off and once with it
on, for mqajit (set_pdl) and DeepGEMM (deep_gemm.set_pdl) in one process, for docs/PERFORMANCE.md.

    PYTHONPATH=build/python:.deepgemm:python/benchmarks python3 python/benchmarks/pdl_chain.py --json out.json

A row's time is one call's share of the graph: triton.testing.do_bench on the replay (L2 flushed
before every replay, median), divided by the calls in the chain; the libraries and both settings take
turns in `--rounds` rounds and the row reports the median of its rounds. The outputs of the last call
of the chain are compared with an eager call's (bitwise for mqajit, calc_diff against DeepGEMM).
Without deep_gemm importable, only mqajit is timed."""

import argparse
import json
import statistics

import torch
from triton.testing import do_bench

import mqajit
from side_by_side import Decode, Prefill, calc_diff, deep_gemm, warm_up

# (op, heads, next_n or S, batch or N, context): the rows where a call is a few microseconds, so the
# launch and the ramp-up are a large part of it.
ROWS = [("decode", 64, 1, 1, 4096), ("decode", 64, 2, 1, 4096), ("decode", 32, 1, 1, 4096),
        ("decode", 64, 1, 32, 4096), ("decode", 64, 2, 32, 4096), ("decode", 32, 1, 32, 4096),
        ("decode", 64, 2, 128, 4096), ("decode", 64, 1, 32, 32768),
        ("prefill", 32, 256, 4096, None), ("prefill", 32, 1024, 4096, None), ("prefill", 64, 256, 4096, None)]


def problems(row, count):
    op, heads, a, b, context = row
    if op == "decode":
        return [Decode(heads, a, b, context, seed=100 + i) for i in range(count)]
    return [Prefill(heads, a, b, seed=100 + i) for i in range(count)]


def chain(calls, pdl_setter, enabled):
    """The calls captured back to back in one graph with PDL `enabled`; returns the replay and the
    last call's output."""
    pdl_setter(enabled)
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for call in calls:
                call()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outputs = [call() for call in calls]
        torch.cuda.synchronize()
    finally:
        pdl_setter(False)
    return graph.replay, outputs[-1]


def run_row(row, count, rounds):
    chain_problems = problems(row, count)
    last = chain_problems[-1]
    eager = last.mqajit()
    inside = last.inside(eager.shape[1])
    libraries = {"mqajit": ([p.mqajit for p in chain_problems], mqajit.set_pdl)}
    if deep_gemm is not None:
        libraries["deep_gemm"] = ([p.deep_gemm for p in chain_problems], deep_gemm.set_pdl)
    replays, result = {}, {"row": list(row), "calls_in_chain": count}
    for name, (calls, setter) in libraries.items():
        for enabled in (False, True):
            replay, output = chain(calls, setter, enabled)
            key = f"{name}_pdl{int(enabled)}"
            replays[key] = replay
            replay()
            torch.cuda.synchronize()
            width = min(eager.shape[1], output.shape[1])
            if name == "mqajit":
                result[key + "_bitwise"] = bool(torch.equal(output[:, :width][inside[:, :width]],
                                                            eager[:, :width][inside[:, :width]]))
            else:
                result[key + "_calc_diff"] = calc_diff(output[:, :width][inside[:, :width]],
                                                       eager[:, :width][inside[:, :width]])
    times = {key: [] for key in replays}
    for _ in range(rounds):
        for key, replay in replays.items():
            times[key].append(do_bench(replay, warmup=10, rep=60, return_mode="median") * 1e3 / count)
    for key, values in times.items():
        result[key + "_us"] = statistics.median(values)
        result[key + "_rounds_us"] = values
    del chain_problems, replays
    torch.cuda.empty_cache()
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=16, help="calls in a chain (each on its own inputs)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="write the rows here as well")
    args = parser.parse_args()
    if deep_gemm is None:
        print("deep_gemm is not importable: mqajit only")
    warm_up()
    rows = []
    print(f"{'row':<34} {'mqajit off':>10} {'on':>8} {'on/off':>7} | {'DeepGEMM off':>12} {'on':>8} {'on/off':>7} | "
          f"{'ours/theirs (on)':>16}")
    for row in ROWS:
        result = run_row(row, args.calls, args.rounds)
        rows.append(result)
        ours_off, ours_on = result["mqajit_pdl0_us"], result["mqajit_pdl1_us"]
        line = f"{str(tuple(row)):<34} {ours_off:>10.2f} {ours_on:>8.2f} {ours_on / ours_off:>7.3f} |"
        if "deep_gemm_pdl0_us" in result:
            theirs_off, theirs_on = result["deep_gemm_pdl0_us"], result["deep_gemm_pdl1_us"]
            line += f" {theirs_off:>12.2f} {theirs_on:>8.2f} {theirs_on / theirs_off:>7.3f} | {ours_on / theirs_on:>16.3f}"
        flags = [key for key, value in result.items() if key.endswith("_bitwise") and not value]
        print(line + (f"  NOT BITWISE: {flags}" if flags else ""), flush=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, out, indent=1)


if __name__ == "__main__":
    main()
