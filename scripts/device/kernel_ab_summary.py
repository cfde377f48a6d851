#!/usr/bin/env python3
"""Summarises a scripts/device/kernel_ab.sh run: per shape, each version's best time over the rounds
divided by the tree's (prefill and decode rows), with the geometric mean per op and head count; a failed check is reported, never
averaged in. Where a bench timed several variants per shape (AB_VARIANTS), each variant's ratio follows.

    scripts/device/kernel_ab_summary.py RESULTS_FOLDER
"""

import glob
import json
import math
import os
import re
import sys


def load(folder):
    times, per_variant, failures = {}, {}, []
    for path in sorted(glob.glob(os.path.join(folder, "*_round*.json"))):
        match = re.fullmatch(r"(decode_)?(.+)_round(\d+)\.json", os.path.basename(path))
        if not match:
            continue
        version = match.group(2)
        try:
            rows = json.load(open(path))
        except (OSError, ValueError) as error:
            failures.append(f"{path}: unreadable ({error})")
            continue
        for row in rows:
            # (op, H, S or "b<batch>n<next_n>", N or context, clean)
            if row.get("op") == "paged_mqa_logits":
                shape = ("decode", row["heads"], f"b{row['batch']}n{row['next_n']}", row["context_len"],
                         row.get("clean_logits", 0))
            else:
                shape = ("prefill", row["heads"], row["seq_len"], row["seq_len_kv"], row.get("clean_logits", 0))
            if row.get("check_failed") or "us" not in row:
                failures.append(f"{version} {shape}: the check against the reference failed")
                continue
            times.setdefault(shape, {}).setdefault(version, []).append(row["us"])
            if len(row.get("variants_us", {})) > 1:
                for variant, us in row["variants_us"].items():
                    per_variant.setdefault((shape, variant), {}).setdefault(version, []).append(us)
    return times, per_variant, failures


def shape_label(shape):
    """H, S (or the decode batch and next_n), N (or the context) and clean_logits, as the tables' first columns."""
    return f"{shape[1]:<2} {shape[2]:>6} {shape[3]:6} {shape[4]:5}"


def print_variants(per_variant, versions):
    print("per variant (version / tree, best round):")
    for (shape, variant), per_version in sorted(per_variant.items(), key=lambda item: (str(item[0][0]), item[0][1])):
        if "tree" not in per_version:
            continue
        tree = min(per_version["tree"])
        cells = [f"{min(per_version[v]) / tree:10.3f}" if v in per_version else f"{'-':>10}" for v in versions]
        print(f"{shape_label(shape)} {variant:<36} {tree:8.1f}  " + "  ".join(cells))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    times, per_variant, failures = load(sys.argv[1])
    versions = sorted({v for per_shape in times.values() for v in per_shape if v != "tree"})
    if not times or not versions:
        print("kernel_ab: nothing to compare (no tree and version rows)")
        return 1
    print("H      S      N clean  tree us  " + "  ".join(f"{v:>10}" for v in versions) + "   (version / tree, best round)")
    ratios = {v: {} for v in versions}
    for shape in sorted(times, key=lambda s: (s[0] != "prefill", s[1], str(s[2]), s[3], s[4])):
        per_version = times[shape]
        if "tree" not in per_version:
            continue
        tree = min(per_version["tree"])
        cells = []
        for v in versions:
            if v in per_version:
                ratio = min(per_version[v]) / tree
                ratios[v].setdefault(f"{shape[0]} H={shape[1]}", []).append(ratio)
                cells.append(f"{ratio:10.3f}")
            else:
                cells.append(f"{'-':>10}")
        print(f"{shape_label(shape)} {tree:8.1f}  " + "  ".join(cells))
    for v in versions:
        means = ", ".join(f"{h}: {math.exp(sum(map(math.log, r)) / len(r)):.3f}" for h, r in sorted(ratios[v].items()))
        print(f"{v}: geometric mean over the tree {means}")
    if per_variant:
        print_variants(per_variant, versions)
    for failure in failures:
        print("FAILED " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
