#!/usr/bin/env python3
"""Ranks where the persistent kernel's warps were sampled (rkbench --pc-sampling).

  pcsamples.py SAMPLES.csv[.gz] DISASSEMBLY.txt [--top N] [--skip-reasons a,b]

SAMPLES: rkbench's CSV (cubin_crc,function,pc_offset,stall_reason,samples).
DISASSEMBLY: `nvdisasm -c -gi` of the program's cubin (the package actorc or
the cache wrote; its line table maps each instruction to its source line and
the inlining chain). Stall reasons come in pairs, X and X_not_issued (the
part of X's samples where no instruction issued); only X is counted.

Prints the samples by stall reason, the hottest source lines (innermost
line, with the line it was inlined at) and the hottest instructions. By
default samples of warps that were sleeping (__nanosleep) or waiting at a
barrier are left out: they are the idle workers, not the message path.
"""
from __future__ import annotations

import argparse
import collections
import csv
import gzip
import re
import sys
from typing import Iterable

_LOC = re.compile(r'//## File "([^"]+)", line (\d+)(?: inlined at "([^"]+)", line (\d+))?')
_INS = re.compile(r'/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*(?:/\*.*)?$')
_PREFIX = "smsp__pcsamp_warps_issue_stalled_"
DEFAULT_SKIP = ("sleeping", "barrier")


def read_disassembly(lines: Iterable[str]) -> dict[int, tuple[str, str, str]]:
    """offset -> (instruction, innermost 'file:line', the 'file:line' it was inlined at)."""
    code = {}
    inner = outer = "?"
    # Before an instruction whose location changed comes a block of
    # comments, innermost first.
    fresh = True
    for line in lines:
        m = _LOC.search(line)
        if m:
            if fresh:
                inner = f"{m.group(1).split('/')[-1]}:{m.group(2)}"
                outer = f"{m.group(3).split('/')[-1]}:{m.group(4)}" if m.group(3) else inner
                fresh = False
            continue
        m = _INS.search(line)
        if m:
            code[int(m.group(1), 16)] = (m.group(2).strip(), inner, outer)
            fresh = True
    return code


class Profile:
    def __init__(self):
        self.by_pc: collections.Counter = collections.Counter()
        self.by_reason: collections.Counter = collections.Counter()
        self.by_pc_reason: dict[int, collections.Counter] = collections.defaultdict(collections.Counter)
        self.skipped: collections.Counter = collections.Counter()

    @property
    def total(self) -> int:
        return sum(self.by_pc.values())

    def lines(self, code: dict[int, tuple[str, str, str]]) -> collections.Counter:
        """Samples by 'file:line (in file:line)'."""
        out = collections.Counter()
        for pc, n in self.by_pc.items():
            _, inner, outer = code.get(pc, ("?", "?", "?"))
            out[f"{inner} (in {outer})" if inner != outer else inner] += n
        return out


def read_samples(rows: Iterable[dict], skip: Iterable[str] = DEFAULT_SKIP) -> Profile:
    p = Profile()
    skip = tuple(skip)
    for row in rows:
        reason = row["stall_reason"].removeprefix(_PREFIX)
        if reason.endswith("_not_issued"):
            continue
        n = int(row["samples"])
        if reason.startswith(skip):
            p.skipped[reason] += n
            continue
        pc = int(row["pc_offset"])
        p.by_pc[pc] += n
        p.by_reason[reason] += n
        p.by_pc_reason[pc][reason] += n
    return p


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("samples")
    ap.add_argument("disassembly")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--skip-reasons", default=",".join(DEFAULT_SKIP))
    a = ap.parse_args()
    with open(a.disassembly) as f:
        code = read_disassembly(f)
    opener = gzip.open if a.samples.endswith(".gz") else open
    with opener(a.samples, "rt") as f:
        p = read_samples(csv.DictReader(f), [s for s in a.skip_reasons.split(",") if s])
    total = p.total
    if total == 0:
        print("no samples left to count")
        return 1
    print(f"{total} samples counted; left out: " + ", ".join(f"{k} {v}" for k, v in p.skipped.most_common()))
    print("\nby stall reason:")
    for r, n in p.by_reason.most_common():
        print(f"  {n:9d} {100 * n / total:5.1f}%  {r}")
    line_reasons = collections.defaultdict(collections.Counter)
    for pc, reasons in p.by_pc_reason.items():
        _, inner, outer = code.get(pc, ("?", "?", "?"))
        line_reasons[f"{inner} (in {outer})" if inner != outer else inner].update(reasons)
    print(f"\nhottest source lines (top {a.top}):")
    for k, n in p.lines(code).most_common(a.top):
        top = ", ".join(f"{r} {c}" for r, c in line_reasons[k].most_common(3))
        print(f"  {n:8d} {100 * n / total:5.1f}%  {k}   [{top}]")
    print(f"\nhottest instructions (top {a.top}):")
    for pc, n in p.by_pc.most_common(a.top):
        text, inner, _ = code.get(pc, ("?", "?", "?"))
        top = ", ".join(f"{r} {c}" for r, c in p.by_pc_reason[pc].most_common(2))
        print(f"  {n:8d} {100 * n / total:5.1f}%  {pc:#08x} {text[:60]:60s} {inner}  [{top}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
