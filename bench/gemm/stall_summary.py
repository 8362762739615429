#!/usr/bin/env python3
"""Reads ncu CSV from stdin (bench/gemm/profile.sh).
--raw:    the raw page: the warp-stall reasons (smsp__average_warps_issue_stalled_*_per_issue_active,
          cycles per issued instruction) of the kernel, largest first.
--source: the SASS source page: the instructions with the most stall samples, with their share."""
import csv
import sys


def num(v):
    try:
        return float(str(v).replace(",", ""))
    except ValueError:
        return 0.0


lines = [l for l in sys.stdin if l.startswith('"')]
if len(lines) < 2:
    print("no ncu data")
    sys.exit(0)
mode = sys.argv[1] if len(sys.argv) > 1 else "--raw"
if mode == "--raw":
    rows = list(csv.reader(lines))
    head, units, vals = rows[0], rows[1], rows[2] if len(rows) > 2 else []
    pre = "smsp__average_warps_issue_stalled_"
    got = [(num(vals[i]), h[len(pre):].removesuffix("_per_issue_active.ratio"))
           for i, h in enumerate(head) if h.startswith(pre) and h.endswith("_per_issue_active.ratio") and i < len(vals)]
    got.sort(reverse=True)
    print("warp stalls (cycles per issued instruction):")
    for v, name in got:
        if v > 0.005:
            print(f"  {name:28s} {v:8.3f}")
    for key in ("gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
                "launch__registers_per_thread", "launch__occupancy_limit_shared_mem", "dram__throughput.avg.pct_of_peak_sustained_elapsed"):
        if key in head and head.index(key) < len(vals):
            print(f"  {key} = {vals[head.index(key)]} {units[head.index(key)]}")
else:
    rows = [r for r in csv.DictReader(lines) if r.get("Address")]
    if not rows:
        print("no source rows")
        sys.exit(0)
    cols = [c for c in rows[0].keys() if c]
    col = next((c for c in cols if c.startswith("Warp Stall Sampling (All")), None)
    src = next((c for c in cols if c == "Source"), cols[1])
    if col is None:
        print("no stall-sampling column:", cols)
        sys.exit(0)
    total = sum(num(r[col]) for r in rows) or 1.0
    print(f"\nSASS instructions by stall samples ({int(total)} samples in all):")
    for r in sorted(rows, key=lambda r: -num(r[col]))[:40]:
        print(f"  {100 * num(r[col]) / total:5.1f}%  {r.get('Address', '')}  {r[src].strip()[:110]}")
