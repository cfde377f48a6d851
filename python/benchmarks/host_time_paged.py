"""Host time of one Python call of paged_mqa_logits (decode), back to back, beside DeepGEMM's.

    PYTHONPATH=build/python:.deepgemm python3 python/benchmarks/host_time_paged.py    # on a GPU machine

Method as python/benchmarks/host_time.py: `calls` back-to-back calls with one synchronize at the
end, wall time / calls, median of `repeats`; then the same with no synchronize in the timed loop
(200 calls enqueued while the GPU lags: the host's time alone). The GPU time of one call comes from
CUDA graph replays; where it is shorter than the call, the loop is host-bound. A small decode step
(batch 1 by default, next_n 2, H 64, contexts near 4096) is where the host time shows: its kernel
takes about 8 us.
"""

import argparse
import json
import os
import sys

from host_time import ENQUEUED_CALLS, graph_time_us, per_call_us, report_line

D, BLOCK_KV = 128, 64


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--next-n", type=int, default=2)
    parser.add_argument("--heads", type=int, default=64, choices=(32, 64))
    parser.add_argument("--context", type=int, default=4096)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--json", help="also write the numbers here (default: $OUT/host_time_paged.json when OUT is set)")
    arguments = parser.parse_args()

    import torch

    import mqajit
    from mqajit import _paged, _torch_hooks

    B, T, H = arguments.batch, arguments.next_n, arguments.heads
    g = torch.Generator(device="cuda").manual_seed(0)
    lens = torch.randint(int(0.7 * arguments.context), int(1.3 * arguments.context) + 1, (B,), device="cuda",
                         generator=g)
    width = int((int(lens.max()) + BLOCK_KV - 1) // BLOCK_KV * BLOCK_KV)
    blocks = B * (width // BLOCK_KV)
    table = torch.randperm(blocks, device="cuda", generator=g).reshape(B, -1).int()
    keys = torch.randn(blocks, BLOCK_KV * D, device="cuda", generator=g).to(torch.float8_e4m3fn)
    scales = torch.rand(blocks, BLOCK_KV, device="cuda", generator=g) + 0.5
    cache = torch.cat([keys.view(torch.uint8), scales.view(torch.uint8)], dim=1).reshape(blocks, BLOCK_KV, 1, D + 4)
    q = torch.randn(B, T, H, D, device="cuda", generator=g).to(torch.float8_e4m3fn)
    weights = torch.randn(B * T, H, device="cuda", generator=g)
    context_lens = (lens[:, None] - T + 1 + torch.arange(T, device="cuda")[None, :]).int()
    out = mqajit.paged_mqa_logits(q, cache, weights, context_lens, table, width)  # warm: compile, load
    report = {}
    mqajit.paged_mqa_logits(q, cache, weights, context_lens, table, width, report=report)
    torch.cuda.synchronize()
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, python {sys.version.split()[0]}")
    print(f"batch={B} next_n={T} H={H} context~{arguments.context}: served by {report['kernel']} ({report['reason']})")
    print(f"tensors read with {_torch_hooks.reader_status()}")
    results = {"reader": _torch_hooks.reader_status(), "calls": {}, "enqueue": {}}

    args = (q, cache, weights, context_lens, table, width)
    cases = {
        "paged_mqa_logits, out=None": lambda: mqajit.paged_mqa_logits(*args),
        "paged_mqa_logits, out=": lambda: mqajit.paged_mqa_logits(*args, False, out),
        "checked Python path, out=None (the call before the fast path)": lambda: _paged._call(
            "paged_mqa_logits", *args, False, None, None, None, False),
    }
    try:
        import deep_gemm
        meta = deep_gemm.get_paged_mqa_logits_metadata(context_lens, BLOCK_KV, deep_gemm.get_num_sms())
        cases["deep_gemm.fp8_paged_mqa_logits (metadata given)"] = lambda: deep_gemm.fp8_paged_mqa_logits(
            q, cache, weights, context_lens, table, meta, width, False)
        cases["deep_gemm.get_paged_mqa_logits_metadata"] = lambda: deep_gemm.get_paged_mqa_logits_metadata(
            context_lens, BLOCK_KV, deep_gemm.get_num_sms())
    except ImportError:
        pass
    sync = torch.cuda.synchronize
    print(f"{arguments.calls} back-to-back calls, one synchronize at the end, median of {arguments.repeats}:")
    for name, function in cases.items():
        median, samples = per_call_us(function, arguments.calls, arguments.repeats, sync)
        report_line(name, median, samples)
        results["calls"][name] = {"median_us": median, "samples_us": samples}
    gpu_us = graph_time_us(torch, lambda: mqajit.paged_mqa_logits(*args, False, out), arguments.calls)
    results["gpu_us_per_call"] = gpu_us
    print(f"GPU time of one call (CUDA graph replays): {gpu_us:.2f} us")
    print(f"host time alone: {ENQUEUED_CALLS} calls enqueued while the GPU lags, median of {arguments.repeats}:")
    for name, function in cases.items():
        median, samples = per_call_us(function, ENQUEUED_CALLS, arguments.repeats, sync, wait_for_gpu=False)
        report_line(name, median, samples)
        results["enqueue"][name] = {"median_us": median, "samples_us": samples}

    path = arguments.json or (os.path.join(os.environ["OUT"], "host_time_paged.json") if "OUT" in os.environ else None)
    if path:
        with open(path, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
