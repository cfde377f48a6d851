#!/usr/bin/env python3
"""Counts the instructions of a kernel's wgmma loops in `cuobjdump -sass` or `nvdisasm -hex` output
(scripts/sass_local.sh makes the latter without a GPU): for every backward branch whose body holds a
wgmma, the body's length, its static stall total (the stall field of each
instruction's control word: the cycles the scheduler waits before the next issue of that warp,
ptxas's own schedule, a lower bound) and its opcode mix. Use it to compare two builds of a kernel
before spending GPU time on timing them.

    scripts/device/sass_loop.py SASS_FILE KERNEL_NAME [--list] [--all]

Only innermost such loops unless --all; --list prints every instruction of them with its stall and
wait-barrier mask. A warning follows a loop where eight or more relu FMNMX run back to back (the
accumulators moved through the relu, a schedule that costs about 10% more stall cycles a tile).
"""

import collections
import re
import sys

INSTRUCTION = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*/\* (0x[0-9a-f]+) \*/")
CONTROL_WORD = re.compile(r"/\* (0x[0-9a-f]+) \*/")
# cuobjdump prints branch targets as addresses, nvdisasm as labels (`(.L_x_12)`, defined by `.L_x_12:` lines).
BACKWARD_BRANCH = re.compile(r"BRA (?:U?!?P\w+,\s*)?(?:0x([0-9a-f]+)|`\((\.L_x_\d+)\))")
LABEL = re.compile(r"^(\.L_x_\d+):")
# nvdisasm releases older than the cubin print wgmma without a mnemonic; WARPGROUP.ARRIVE marks it too.
WGMMA_MARKERS = ("QGMMA", "WARPGROUP")


def parse(path, kernel):
    text = open(path).read()
    if "Function : " + kernel in text:  # cuobjdump -sass
        lines = text.split("Function : " + kernel, 1)[1].split("Function : ", 1)[0].split("\n")
    elif "\n.text." + kernel + ":" in text:  # nvdisasm -hex
        lines = text.split("\n.text." + kernel + ":", 1)[1].split("\n.text.", 1)[0].split("\n")
    else:
        sys.exit(f"{path} has no kernel {kernel}")
    instructions, labels, pending = [], {}, []
    for index, line in enumerate(lines):
        label = LABEL.match(line)
        if label:
            pending.append(label.group(1))
            continue
        match = INSTRUCTION.match(line)
        if not match or index + 1 >= len(lines):
            continue
        control = CONTROL_WORD.search(lines[index + 1])
        if not control:
            continue
        high = int(control.group(1), 16)  # bits 64..127 of the instruction: the control fields
        for name in pending:
            labels[name] = int(match.group(1), 16)
        pending = []
        instructions.append({
            "address": int(match.group(1), 16),
            "text": match.group(2).strip(),
            "stall": (high >> 41) & 0xF,
            "wait_mask": (high >> 52) & 0x3F,
        })
    return instructions, labels


def opcode(text):
    text = re.sub(r"^@!?U?P\w+\s+", "", text)
    return text.split()[0].split(".")[0] if text else "?"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    instructions, labels = parse(sys.argv[1], sys.argv[2])
    loops = []
    for branch in instructions:
        match = BACKWARD_BRANCH.search(branch["text"])
        if not match:
            continue
        start = int(match.group(1), 16) if match.group(1) else labels.get(match.group(2), branch["address"])
        if start >= branch["address"]:
            continue
        body = [i for i in instructions if start <= i["address"] <= branch["address"]]
        if any(opcode(i["text"]) in WGMMA_MARKERS for i in body):
            loops.append((start, branch["address"], body))
    if "--all" not in sys.argv[3:]:
        loops = [l for l in loops if not any(o is not l and l[0] <= o[0] and o[1] <= l[1] for o in loops)]
    for start, end, body in loops:
        mix = collections.Counter(opcode(i["text"]) for i in body)
        print(f"loop {start:#x}-{end:#x}: {len(body)} instructions, static stalls "
              f"{sum(i['stall'] for i in body)} cycles; " + ", ".join(f"{k} {v}" for k, v in mix.most_common()))
        run, longest, run_stalls = 0, 0, 0
        for i in body:
            run = run + 1 if opcode(i["text"]) == "FMNMX" else 0
            longest = max(longest, run)
            if run >= 8:
                run_stalls += i["stall"]
        if longest >= 8:
            print(f"  warning: {longest} relu FMNMX in a row ({run_stalls} stall cycles in such runs): ptxas is "
                  "moving the accumulators through the relu instead of pairing each with its FFMA; schedule "
                  "state live across the tile loop did this once (docs/kernels_sm90.md)")
        if "--list" in sys.argv[3:]:
            for i in body:
                print(f"  {i['address']:05x} stall {i['stall']:2} wait {i['wait_mask']:02x}  {i['text']}")
    if not loops:
        print("no loop with a QGMMA in it")


if __name__ == "__main__":
    main()
