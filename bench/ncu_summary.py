#!/usr/bin/env python3
"""Summarises ncu CSV files written by bench/sweep.sh: per kernel (name, grid, block) and setting,
the median duration, DRAM TB/s (bytes read + written over the duration), registers, active warps and
instructions, so settings of the code generator can be compared side by side."""
import csv
import statistics
import sys
from collections import defaultdict


def num(v):
    try:
        return float(str(v).replace(",", ""))
    except ValueError:
        return float("nan")


rows = defaultdict(list)
for path in sys.argv[1:]:
    setting = path.rsplit("/", 1)[-1].removeprefix("ncu_").removesuffix(".csv")
    with open(path) as f:
        lines = [l for l in f if l.startswith('"')]
    if len(lines) < 3:
        print(f"{setting}: no profile data")
        continue
    for r in csv.DictReader(lines[:1] + lines[2:]):  # the second line holds the units
        name = r.get("Kernel Name", "?")
        key = (name, setting)
        rows[key].append(r)

print(f"{'kernel':<28} {'setting':<10} {'grid':>8} {'block':>6} {'regs':>5} {'warps%':>7} {'us':>9} {'TB/s':>6} {'Minst':>8}")
for (name, setting), rs in sorted(rows.items()):
    # one line per distinct grid (the benchmarks run several shapes of one kernel)
    by_grid = defaultdict(list)
    for r in rs:
        by_grid[(r.get("launch__grid_size"), r.get("launch__block_size"), r.get("dram__bytes_read.sum"))].append(r)
    for (grid, block, _), g in by_grid.items():
        dur = statistics.median(num(r["gpu__time_duration.sum"]) for r in g)  # ns
        byts = statistics.median(num(r["dram__bytes_read.sum"]) + num(r["dram__bytes_write.sum"]) for r in g)
        regs = g[0].get("launch__registers_per_thread")
        warps = num(g[0].get("sm__warps_active.avg.pct_of_peak_sustained_active"))
        inst = num(g[0].get("smsp__inst_executed.sum")) / 1e6
        print(f"{name[:28]:<28} {setting:<10} {grid:>8} {block:>6} {regs:>5} {warps:7.1f} {dur / 1e3:9.1f} "
              f"{byts / dur / 1e3:6.2f} {inst:8.2f}")
