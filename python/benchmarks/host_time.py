"""Host time of one Python call of mqa_logits, back to back (issue #12's bar: at S=256 N=4096 H=32,
at most 12 us per call with out=None and 8 us with out=).

    PYTHONPATH=build/python python3 python/benchmarks/host_time.py            # on a GPU machine
    PYTHONPATH=build/python python3 python/benchmarks/host_time.py --fake     # here: fake tensors, no GPU

Method: `calls` back-to-back calls, one torch.cuda.synchronize() at the end, wall time / calls;
repeated `repeats` times, the median printed. The GPU time of one call is measured apart, by
replaying the call captured in a CUDA graph (no host work between kernels): when it is shorter
than the call's wall time, the loop is host-bound and its time per call is the host's.
Also printed: the same loop through the checked Python path (what every call cost before the
fast path), DeepGEMM's surface, the parts of a call (allocation, stream getter, the C++ call
through the view-tuple API), and the kernel time under set_num_sms() caps.
With --fake (no torch, no GPU) the calls run on fake tensors up to the library's missing
driver: only the ratios between the paths mean anything there.
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path


ENQUEUED_CALLS = 200  # far below the driver's launch queue depth (about 1000)


def per_call_us(function, calls, repeats, synchronize=lambda: None, wait_for_gpu=True):
    """Wall time per call of `calls` back-to-back calls, median of `repeats`. wait_for_gpu=False
    leaves the closing synchronize out of the timed loop: with few enough calls that the launch
    queue never fills, that is the host's time per call while the GPU lags behind."""
    samples = []
    for _ in range(repeats):
        synchronize()
        start = time.perf_counter_ns()
        for _ in range(calls):
            function()
        if wait_for_gpu:
            synchronize()
        samples.append((time.perf_counter_ns() - start) / calls / 1000)
    synchronize()
    return statistics.median(samples), samples


def report_line(name, median, samples):
    print(f"  {name:<52} {median:8.2f} us/call   (min {min(samples):.2f}, max {max(samples):.2f})")


def run_gpu(arguments, results):
    import torch

    import mqajit
    from mqajit import _checked, _mqajit, _torch_hooks, _views

    S, N, H, D = arguments.seq_len, arguments.seq_len_kv, arguments.heads, 128
    device = torch.device("cuda", torch.cuda.current_device())
    generator = torch.Generator(device="cpu").manual_seed(0)
    q = torch.randn(S, H, D, generator=generator).to(device=device, dtype=torch.float8_e4m3fn)
    kv = torch.randn(N, D, generator=generator).to(device=device, dtype=torch.float8_e4m3fn)
    kv_scales = (torch.rand(N, generator=generator) + 0.5).to(device)
    weights = torch.randn(S, H, generator=generator).to(device)
    cu_starts = torch.zeros(S, dtype=torch.int32, device=device)
    cu_ends = (torch.arange(S, dtype=torch.int32, device=device) + (N - S + 1)).clamp(max=N)
    clean = bool(arguments.clean_logits)
    out = mqajit.mqa_logits(q, (kv, kv_scales), weights, cu_starts, cu_ends, clean)  # warm: compile, load
    report = {}
    mqajit.mqa_logits(q, (kv, kv_scales), weights, cu_starts, cu_ends, clean, report=report)
    torch.cuda.synchronize()
    print(f"{torch.cuda.get_device_name(device)}, torch {torch.__version__}, python {sys.version.split()[0]}")
    print(f"S={S} N={N} H={H} D={D} clean_logits={clean}: served by {report['kernel']} ({report['reason']})")
    print(f"tensors read with {_torch_hooks.reader_status()}")
    results["reader"] = _torch_hooks.reader_status()
    print(f"{arguments.calls} back-to-back calls, one synchronize at the end, median of {arguments.repeats}:")

    sync = torch.cuda.synchronize
    pair = (kv, kv_scales)
    cases = {
        "mqa_logits, out=None": lambda: mqajit.mqa_logits(q, pair, weights, cu_starts, cu_ends, clean),
        "mqa_logits, out=": lambda: mqajit.mqa_logits(q, pair, weights, cu_starts, cu_ends, clean, out),
        "fp8_mqa_logits (DeepGEMM's surface)": lambda: mqajit.fp8_mqa_logits(q, pair, weights, cu_starts, cu_ends,
                                                                             clean),
        "fp8_fp4_mqa_logits((q, None), ...)": lambda: mqajit.fp8_fp4_mqa_logits((q, None), pair, weights, cu_starts,
                                                                               cu_ends, clean),
        "checked Python path, out=None (the old call)": lambda: _checked.mqa_logits(q, pair, weights, cu_starts,
                                                                                     cu_ends, clean),
        "checked Python path, out=": lambda: _checked.mqa_logits(q, pair, weights, cu_starts, cu_ends, clean, out),
    }
    try:
        import deep_gemm
        cases["deep_gemm.fp8_mqa_logits"] = lambda: deep_gemm.fp8_mqa_logits(q, pair, weights, cu_starts, cu_ends,
                                                                             clean)
    except ImportError:
        pass
    if mqajit.torch_op_available()[0]:
        cases["torch.ops.mqajit.mqa_logits"] = lambda: torch.ops.mqajit.mqa_logits(q, kv, kv_scales, weights,
                                                                                   cu_starts, cu_ends, clean)
    for name, function in cases.items():
        median, samples = per_call_us(function, arguments.calls, arguments.repeats, sync)
        report_line(name, median, samples)
        results["calls"][name] = {"median_us": median, "samples_us": samples}

    print("parts of a call (same loop, no kernel unless said):")
    stream = torch.cuda.current_stream(device).cuda_stream
    views = [_views.view_of(name, tensor, device) for name, tensor in
             (("q", q), ("kv", kv), ("kv_scales", kv_scales), ("weights", weights), ("cu_starts", cu_starts),
              ("cu_ends", cu_ends), ("out", out))]
    row_stride = out.stride(0)
    without_library = _mqajit._fast_call_without_library
    parts = {
        "fast path without the library call, out=None": lambda: without_library(
            "mqa_logits", q, kv, kv_scales, weights, cu_starts, cu_ends, clean, None, 0, None, None, None, False),
        "fast path without the library call, out=": lambda: without_library(
            "mqa_logits", q, kv, kv_scales, weights, cu_starts, cu_ends, clean, out, 0, None, None, None, False),
        "torch.empty_strided (the allocation)": lambda: torch.empty_strided((S, N), (row_stride, 1),
                                                                            dtype=torch.float32, device=device),
        "torch._C._cuda_getCurrentRawStream": lambda: torch._C._cuda_getCurrentRawStream(device.index),
        "C++ call through the view-tuple API (kernel runs)": lambda: _mqajit.mqa_logits(
            *views, clean_logits=clean, stream=stream),
    }
    for name, function in parts.items():
        median, samples = per_call_us(function, arguments.calls, arguments.repeats, sync)
        report_line(name, median, samples)
        results["parts"][name] = {"median_us": median, "samples_us": samples}

    if results["reader"].startswith("torch's C++ types"):
        os.environ["MQAJIT_TORCH_READER"] = "0"
        _torch_hooks.install(None)  # loaded again on the next call, without the torch reader
        print("the same with tensors read with Python attributes (MQAJIT_TORCH_READER=0):")
        for name in ("mqa_logits, out=None", "mqa_logits, out="):
            median, samples = per_call_us(cases[name], arguments.calls, arguments.repeats, sync)
            report_line(name, median, samples)
            results["calls"][name + ", Python attributes"] = {"median_us": median, "samples_us": samples}
        del os.environ["MQAJIT_TORCH_READER"]
        _torch_hooks.install(None)

    gpu_us = graph_time_us(torch, lambda: mqajit.mqa_logits(q, pair, weights, cu_starts, cu_ends, clean, out),
                           arguments.calls)
    results["gpu_us_per_call"] = gpu_us
    print(f"GPU time of one call (CUDA graph replays, no host work between kernels): {gpu_us:.2f} us")
    for name in ("mqa_logits, out=None", "mqa_logits, out="):
        host = results["calls"][name]["median_us"]
        verdict = ("host-bound: the GPU work is shorter than the call, so this is the host's time"
                   if gpu_us < 0.9 * host else "GPU-bound: the GPU work takes about as long as the call")
        print(f"  {name}: {host:.2f} us per call vs {gpu_us:.2f} us of GPU work: {verdict}")
    print(f"host time alone: {ENQUEUED_CALLS} calls enqueued while the GPU lags (no synchronize in the timed loop), "
          f"median of {arguments.repeats}:")
    for name, bar in (("mqa_logits, out=None", 12.0), ("mqa_logits, out=", 8.0),
                      ("deep_gemm.fp8_mqa_logits", None)):
        if name not in cases:
            continue
        median, samples = per_call_us(cases[name], ENQUEUED_CALLS, arguments.repeats, sync, wait_for_gpu=False)
        report_line(name, median, samples)
        results["enqueue"][name] = {"median_us": median, "samples_us": samples}
        if bar is not None:
            print(f"    bar {bar:.0f} us: {'met' if median <= bar else 'MISSED'}")

    sms_caps(torch, mqajit, arguments, results)


def graph_time_us(torch, call, replays):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        call()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(replays):
        graph.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1000 / replays


def sms_caps(torch, mqajit, arguments, results):
    """Kernel time of a large shape under set_num_sms() caps: fewer SMs, longer kernels."""
    S, N, H, D = 4096, 16384, 32, 128
    device = torch.device("cuda", torch.cuda.current_device())
    q = torch.randn(S, H, D, device=device).to(torch.float8_e4m3fn)
    kv = torch.randn(N, D, device=device).to(torch.float8_e4m3fn)
    kv_scales = torch.rand(N, device=device) + 0.5
    weights = torch.randn(S, H, device=device)
    starts = torch.zeros(S, dtype=torch.int32, device=device)
    ends = torch.full((S,), N, dtype=torch.int32, device=device)
    out = torch.empty(S, N, device=device)
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    print(f"set_num_sms caps, S={S} N={N} H={H}, GPU time per call (graph replays; the sm_90a kernels honour the cap):")
    try:
        for cap in (0, sms // 2, sms // 4):
            mqajit.set_num_sms(cap)
            gpu_us = graph_time_us(torch, lambda: mqajit.mqa_logits(q, (kv, kv_scales), weights, starts, ends, False,
                                                                    out), 20)
            results["num_sms"][str(cap)] = gpu_us
            print(f"  num_sms={cap or sms:<4} {gpu_us:9.1f} us")
    finally:
        mqajit.set_num_sms(0)


def run_fake(arguments, results):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from fake_torch import FakeTensor, FakeTorch, FLOAT32, problem

    import mqajit
    from mqajit import _checked, _mqajit

    FakeTorch().install()
    t = problem()
    q, kv, scales, weights, starts, ends = t.values()
    out = FakeTensor(FLOAT32, (q.shape[0], kv.shape[0]))
    views = [(v.data_ptr(), str(v.dtype).removeprefix("torch.").replace("float8_e4m3fn", "float8_e4m3"), v.shape,
              v.stride()) for v in (q, kv, scales, weights, starts, ends, out)]

    def failing(call):
        def run():
            try:
                call()
            except RuntimeError:
                pass
        return run

    print("fake tensors, no GPU: each call fails where the library looks for the device (exception included)")
    cases = {
        "fast entry, out=None": lambda: mqajit.mqa_logits(q, (kv, scales), weights, starts, ends),
        "fast entry, out=": lambda: mqajit.mqa_logits(q, (kv, scales), weights, starts, ends, True, out),
        "fp8_mqa_logits": lambda: mqajit.fp8_mqa_logits(q, (kv, scales), weights, starts, ends),
        "checked Python path, out=None": lambda: _checked.mqa_logits(q, (kv, scales), weights, starts, ends),
        "checked Python path, out=": lambda: _checked.mqa_logits(q, (kv, scales), weights, starts, ends, True, out),
        "view-tuple API alone (the library's floor here)": lambda: _mqajit.mqa_logits(*views),
    }
    for name, function in cases.items():
        median, samples = per_call_us(failing(function), arguments.calls, arguments.repeats)
        report_line(name, median, samples)
        results["calls"][name] = {"median_us": median, "samples_us": samples}
    print("the fast path without the library call (binding, reads of 7 fake tensors, stream, allocation):")
    without_library = _mqajit._fast_call_without_library
    parts = {
        "out=None": lambda: without_library("mqa_logits", q, kv, scales, weights, starts, ends, True, None, 0, None,
                                            None, None, False),
        "out=": lambda: without_library("mqa_logits", q, kv, scales, weights, starts, ends, True, out, 0, None, None,
                                        None, False),
    }
    for name, function in parts.items():
        median, samples = per_call_us(function, arguments.calls, arguments.repeats)
        report_line(name, median, samples)
        results["parts"][name] = {"median_us": median, "samples_us": samples}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq-len", type=int, default=256)
    parser.add_argument("--seq-len-kv", type=int, default=4096)
    parser.add_argument("--heads", type=int, default=32, choices=(32, 64))
    parser.add_argument("--clean-logits", type=int, default=0, choices=(0, 1))
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--fake", action="store_true", help="fake tensors, no torch or GPU needed")
    parser.add_argument("--json", help="also write the numbers here (default: $OUT/host_time.json when OUT is set)")
    arguments = parser.parse_args()
    results = {"arguments": vars(arguments), "calls": {}, "parts": {}, "enqueue": {}, "num_sms": {}}
    (run_fake if arguments.fake else run_gpu)(arguments, results)
    path = arguments.json or (os.path.join(os.environ["OUT"], "host_time.json") if os.environ.get("OUT") else None)
    if path:
        Path(path).write_text(json.dumps(results, indent=1))
        print(f"numbers written to {path}")


if __name__ == "__main__":
    main()
