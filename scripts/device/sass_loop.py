#!/usr/bin/env python3
"""Counts the instructions of a kernel's wgmma loops in `cuobjdump -sass` output: for every backward
branch whose body holds a QGMMA, the body's length, its static stall total (the stall field of each
instruction's control word: the cycles the scheduler waits before the next issue of that warp,
ptxas's own schedule, a lower bound) and its opcode mix. Use it to compare two builds of a kernel
before spending GPU time on timing them.

    scripts/device/sass_loop.py SASS_FILE KERNEL_NAME [--list] [--all]

Only innermost such loops unless --all; --list prints every instruction of them with its stall and
wait-barrier mask.
"""

import collections
import re
import sys

INSTRUCTION = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);\s*/\* (0x[0-9a-f]+) \*/")
CONTROL_WORD = re.compile(r"/\* (0x[0-9a-f]+) \*/")
BACKWARD_BRANCH = re.compile(r"BRA (?:U?!?P\w+,\s*)?0x([0-9a-f]+)")


def parse(path, kernel):
    text = open(path).read()
    marker = "Function : " + kernel
    if marker not in text:
        sys.exit(f"{path} has no kernel {kernel}")
    lines = text.split(marker, 1)[1].split("Function : ", 1)[0].split("\n")
    instructions = []
    for index, line in enumerate(lines):
        match = INSTRUCTION.match(line)
        if not match or index + 1 >= len(lines):
            continue
        control = CONTROL_WORD.search(lines[index + 1])
        if not control:
            continue
        high = int(control.group(1), 16)  # bits 64..127 of the instruction: the control fields
        instructions.append({
            "address": int(match.group(1), 16),
            "text": match.group(2).strip(),
            "stall": (high >> 41) & 0xF,
            "wait_mask": (high >> 52) & 0x3F,
        })
    return instructions


def opcode(text):
    text = re.sub(r"^@!?U?P\w+\s+", "", text)
    return text.split()[0].split(".")[0]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    instructions = parse(sys.argv[1], sys.argv[2])
    loops = []
    for branch in instructions:
        match = BACKWARD_BRANCH.search(branch["text"])
        if not match or int(match.group(1), 16) >= branch["address"]:
            continue
        start = int(match.group(1), 16)
        body = [i for i in instructions if start <= i["address"] <= branch["address"]]
        if any(opcode(i["text"]) == "QGMMA" for i in body):
            loops.append((start, branch["address"], body))
    if "--all" not in sys.argv[3:]:
        loops = [l for l in loops if not any(o is not l and l[0] <= o[0] and o[1] <= l[1] for o in loops)]
    for start, end, body in loops:
        mix = collections.Counter(opcode(i["text"]) for i in body)
        print(f"loop {start:#x}-{end:#x}: {len(body)} instructions, static stalls "
              f"{sum(i['stall'] for i in body)} cycles; " + ", ".join(f"{k} {v}" for k, v in mix.most_common()))
        if "--list" in sys.argv[3:]:
            for i in body:
                print(f"  {i['address']:05x} stall {i['stall']:2} wait {i['wait_mask']:02x}  {i['text']}")
    if not loops:
        print("no loop with a QGMMA in it")


if __name__ == "__main__":
    main()
