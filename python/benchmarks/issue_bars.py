"""Where rows of side_by_side.py stand against the open issues' bars (issue 12: prefill,
issue 13: decode; both with clean_logits=0), counted from its JSON files, so a device call's result can be
judged the same way every time. The bars are the issues' own; they are judged only from H200 rows.

    python3 python/benchmarks/issue_bars.py side_by_side_decode.json [side_by_side_prefill.json ...]"""

import json
import math
import sys


def geometric_mean(values):
    return math.exp(sum(map(math.log, values)) / len(values))


def ratio(row):
    """mqajit's time over DeepGEMM's kernel time."""
    return row["mqajit_us"] / row["deep_gemm_us"]


def misses(rows, label, passes):
    failed = [label(r) for r in rows if not passes(r)]
    return f"{len(rows) - len(failed)} of {len(rows)}" + (f" (missed: {', '.join(failed)})" if failed else "")


def decode_bars(rows):
    rows = [r for r in rows if "deep_gemm_us" in r and r.get("clean_logits", 0) == 0]
    if not rows:
        print("issue 13: no clean_logits=0 row timed beside DeepGEMM (the bars are judged in that mode)")
        return

    def label(r):
        return f"H{r['heads']} n{r['next_n']} {r['batch']}x{r['context'] // 1024}k"

    def vs_both(r):
        return r["mqajit_us"] / (r["deep_gemm_us"] + r["metadata_us"])

    big = [r for r in rows if r["batch"] * r["context"] >= 4 * 1024 * 1024]
    small = [r for r in rows if r["batch"] <= 32 and "metadata_us" in r]
    print(f"issue 13, geometric mean mqajit / DeepGEMM kernel: {geometric_mean([ratio(r) for r in rows]):.3f} "
          f"over {len(rows)} rows")
    print(f"issue 13, <= 1.05x DeepGEMM's kernel: {misses(rows, lambda r: f'{label(r)} {ratio(r):.3f}', lambda r: ratio(r) <= 1.05)}")
    print("issue 13, >= 85% of the bytes floor at batch x context >= 4M: "
          + misses(big, lambda r: f"{label(r)} {100 * r['floor_us'] / r['mqajit_us']:.1f}%",
                   lambda r: r["floor_us"] / r["mqajit_us"] >= 0.85))
    print("issue 13, <= 0.8x DeepGEMM's kernel + metadata at batch <= 32: "
          + misses(small, lambda r: f"{label(r)} {vs_both(r):.3f}", lambda r: vs_both(r) <= 0.8))


def prefill_bars(rows):
    rows = [r for r in rows if "deep_gemm_us" in r and r.get("clean_logits", 0) == 0]

    def label(r):
        return f"H{r['heads']} {r['seq_len']}x{r['seq_len_kv']}"

    def share(r):
        return r["floor_us"] / r["mqajit_us"]

    for heads, floor_share in ((32, 0.78), (64, 0.82)):
        mine = [r for r in rows if r["heads"] == heads]
        if not mine:
            continue
        large = [r for r in mine if r["seq_len"] >= 1024]
        print(f"issue 12, H={heads} geometric mean mqajit / DeepGEMM: {geometric_mean([ratio(r) for r in mine]):.3f} "
              f"over {len(mine)} rows" + (" (bar: <= 0.80)" if heads == 32 else ""))
        print(f"issue 12, H={heads} <= 0.92x DeepGEMM: "
              + misses(mine, lambda r: f"{label(r)} {ratio(r):.3f}", lambda r: ratio(r) <= 0.92))
        print(f"issue 12, H={heads} >= {100 * floor_share:.0f}% of the floor at S >= 1024: "
              + misses(large, lambda r: f"{label(r)} {100 * share(r):.1f}%", lambda r: share(r) >= floor_share))


def main(paths):
    if not paths:
        print(__doc__)
        return 2
    for path in paths:
        with open(path) as f:
            rows = json.load(f)
        print(f"{path}:")
        if rows and "next_n" in rows[0]:
            decode_bars(rows)
        else:
            prefill_bars(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
