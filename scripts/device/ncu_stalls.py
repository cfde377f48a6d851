#!/usr/bin/env python3
"""Where a kernel's warps wait, from Nsight Compute's source page: the share of each stall reason
over all sampled warps, and the instructions that hold the most samples with their top reasons.

    ncu --clock-control none --set full -k regex:NAME -c 1 -o report PROGRAM...
    ncu -i report.ncu-rep --page source --csv --print-source sass > source.csv
    scripts/device/ncu_stalls.py source.csv [TOP]
"""

import collections
import csv
import sys


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rows = list(csv.reader(open(sys.argv[1])))
    header_index = next((i for i, row in enumerate(rows) if "Address" in row and "Source" in row), None)
    if header_index is None:
        sys.exit(f"{sys.argv[1]} is not ncu's source page (no Address/Source header)")
    header = rows[header_index]
    column = {name: i for i, name in enumerate(header)}
    data = [row for row in rows[header_index + 1:] if len(row) == len(header)]
    reasons = [name for name in header if name.startswith("stall_") and "Not Issued" not in name]
    samples_column = column["Warp Stall Sampling (All Samples)"]
    total = sum(number(row[samples_column]) for row in data)
    if total == 0:
        sys.exit("no samples in the source page (was SourceCounters collected?)")
    per_reason = collections.Counter()
    for row in data:
        for reason in reasons:
            per_reason[reason] += number(row[column[reason]])
    print(f"{total:.0f} samples")
    for reason, count in per_reason.most_common(12):
        print(f"  {reason[6:]:20} {100 * count / total:5.1f}%")
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    print("instructions holding the most samples:")
    for row in sorted(data, key=lambda r: -number(r[samples_column]))[:top]:
        main_reasons = sorted(((number(row[column[r]]), r[6:]) for r in reasons), reverse=True)[:3]
        reasons_text = ", ".join(f"{name} {count:.0f}" for count, name in main_reasons if count > 0)
        print(f"  {number(row[samples_column]):7.0f}  {row[column['Source']].strip()[:64]:64}  {reasons_text}")


if __name__ == "__main__":
    main()
