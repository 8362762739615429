#!/usr/bin/env python3
"""Summarises ncu text reports (bench/row_profile.sh): per kernel name, grid and block, the median
duration, registers per thread, theoretical and achieved occupancy, DRAM throughput, warp cycles
per issued instruction, and the two largest stall reasons (the smsp__average_warps_issue_stalled_*
metrics row_profile.sh asks for: warps stalled per issued instruction)."""
import re
import statistics
import sys
from collections import defaultdict

HEAD = re.compile(r"^  (\S.*?) \((\d+), (\d+), (\d+)\)x\((\d+), (\d+), (\d+)\), Context")
METRICS = {
    "Duration": "us",
    "Registers Per Thread": "regs",
    "Theoretical Occupancy": "theo %",
    "Achieved Occupancy": "ach %",
    "DRAM Throughput": "dram %",
    "Warp Cycles Per Issued Instruction": "cyc/inst",
}
STALL = re.compile(r"smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio\s+\S*\s+([\d.,]+)\s*$")


def parse(path):
    runs = defaultdict(list)
    cur = None
    with open(path, errors="replace") as f:
        for line in f:
            m = HEAD.match(line)
            if m:
                name = m.group(1)
                short = re.sub(r"\(.*", "", name)[:48]
                cur = {"key": (short, "x".join(m.group(2, 3, 4)), "x".join(m.group(5, 6, 7))), "stalls": []}
                runs[cur["key"]].append(cur)
                continue
            if cur is None:
                continue
            s = line.strip()
            for label, col in METRICS.items():
                if s.startswith(label + " "):
                    parts = s.split()
                    try:
                        v = float(parts[-1].replace(",", ""))
                    except ValueError:
                        continue
                    if label == "Duration" and len(parts) >= 2 and parts[-2] in ("ms", "msecond"):
                        v *= 1000.0
                    if label == "Duration" and len(parts) >= 2 and parts[-2] in ("ns", "nsecond"):
                        v /= 1000.0
                    cur[col] = v
            sm = STALL.search(s)
            if sm:
                cur["stalls"].append((float(sm.group(2).replace(",", "")), sm.group(1)))
    return runs


def main():
    cols = list(METRICS.values())
    print("| source | kernel | grid | block | calls | " + " | ".join(cols) + " | top stalls (warps per issue) |")
    print("|---|---|---|---|---|" + "---|" * len(cols) + "---|")
    for path in sys.argv[1:]:
        src = path.rsplit("/", 1)[-1].split(".")[0]
        for key, rs in parse(path).items():
            vals = []
            for c in cols:
                xs = [r[c] for r in rs if c in r]
                vals.append(f"{statistics.median(xs):.4g}" if xs else "-")
            stalls = defaultdict(list)
            for r in rs:
                for cyc, why in r["stalls"]:
                    stalls[why].append(cyc)
            top = sorted(((statistics.median(v), k) for k, v in stalls.items()), reverse=True)[:2]
            ts = "; ".join(f"{k} {c:.1f}" for c, k in top) or "-"
            print(f"| {src} | {key[0]} | {key[1]} | {key[2]} | {len(rs)} | " + " | ".join(vals) + f" | {ts} |")


if __name__ == "__main__":
    main()
