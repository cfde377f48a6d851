#!/usr/bin/env python3
"""Summarizes a topk_prebuilt_ab.sh run: for each shape, the fused path's median over the rounds
per build, and each build's time over the tree's (and `mqa_logits` alone, for scale).
  python3 scripts/device/topk_ab_summary.py AB_DIR"""
import glob
import json
import os
import re
import statistics
import sys


def main(ab_dir):
    times = {}  # (build, shape) -> [fused us per round]
    logits = {}
    for path in sorted(glob.glob(os.path.join(ab_dir, "bench_*_*.json"))):
        match = re.fullmatch(r"bench_(.+)_(\d+)\.json", os.path.basename(path))
        if not match:
            continue
        build = match.group(1)
        for row in json.load(open(path)):
            shape = (row["heads"], row["seq_len"], row["seq_len_kv"])
            if "fused" in row:
                times.setdefault((build, shape), []).append(row["fused"]["us"])
            if "logits_us" in row:
                logits.setdefault(shape, []).append(row["logits_us"])
    builds = sorted({b for b, _ in times}, key=lambda b: (b != "tree", b))
    shapes = sorted({s for _, s in times})
    if not shapes:
        sys.exit(f"no bench_BUILD_ROUND.json with fused times under {ab_dir}")
    print("| H | S | N | mqa_logits us | " + " | ".join(f"{b} fused us (rounds)" for b in builds) + " | "
          + " | ".join(f"{b} / tree" for b in builds if b != "tree") + " |")
    print("|---" * (4 + 2 * len(builds) - 1) + "|")
    ratios = {b: [] for b in builds if b != "tree"}
    for shape in shapes:
        medians = {b: statistics.median(times[(b, shape)]) for b in builds if (b, shape) in times}
        cells = [f"{medians[b]:.1f} ({len(times[(b, shape)])})" if b in medians else "-" for b in builds]
        rel = []
        for b in ratios:
            if b in medians and "tree" in medians:
                ratios[b].append(medians[b] / medians["tree"])
                rel.append(f"{medians[b] / medians['tree']:.3f}")
            else:
                rel.append("-")
        print(f"| {shape[0]} | {shape[1]} | {shape[2]} | {statistics.median(logits.get(shape, [0])):.1f} | "
              + " | ".join(cells) + " | " + " | ".join(rel) + " |")
    for b, r in ratios.items():
        if r:
            print(f"{b}: geometric mean over the tree {statistics.geometric_mean(r):.3f} over {len(r)} shapes")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
