#!/usr/bin/env python3
"""Summarises bench/row_configs.sh: per kernel, dtype and shape, the TB/s of each configuration
(ctile_bench --configs rows, told apart by their `options`) and of the best peer, and the best
configuration's ratio to that peer. Failed rows show as FAIL.

  bench/row_configs.py CTILE_JSONL [PEERS_JSONL]
"""
import json
import pathlib
import sys


def records(path):
    p = pathlib.Path(path)
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]


def config_of(options):
    # "approx exp, approx division (per op), warps=4 min_ctas=0" -> "warps=4 min_ctas=0"; "default" stays
    for part in (options or "default").split(", "):
        if part.startswith("warps="):
            return part
    return "default"


def main():
    ctile = records(sys.argv[1])
    peers = records(sys.argv[2]) if len(sys.argv) > 2 else []
    key = lambda r: (r["kernel"], r["dtype"], tuple(r["shape"]))  # noqa: E731
    best_peer = {}
    for r in peers:
        if r.get("ok") and r.get("tbps"):
            k = key(r)
            if r["tbps"] > best_peer.get(k, (0, ""))[0]:
                best_peer[k] = (r["tbps"], r["impl"])
    configs, rows = [], {}
    for r in ctile:
        c = config_of(r.get("options"))
        if c not in configs:
            configs.append(c)
        rows.setdefault(key(r), {})[c] = r["tbps"] if r.get("ok") and r.get("tbps") else None
    print("| kernel | dtype | shape | " + " | ".join(configs) + " | best peer | best config | its ratio | default's ratio |")
    print("|" + "---|" * (len(configs) + 7))
    for k, by in rows.items():
        cells = ["FAIL" if by.get(c) is None and c in by else (f"{by[c]:.2f}" if c in by else "-") for c in configs]
        good = {c: v for c, v in by.items() if v}
        bc = max(good, key=good.get) if good else "-"
        peer = best_peer.get(k)
        ratio = f"{good[bc] / peer[0]:.2f}x" if peer and good else "-"
        dratio = f"{good['default'] / peer[0]:.2f}x" if peer and good.get("default") else "-"
        ps = f"{peer[0]:.2f} ({peer[1]})" if peer else "-"
        shape = "x".join(str(e) for e in k[2])
        print(f"| {k[0]} | {k[1]} | {shape} | " + " | ".join(cells) + f" | {ps} | {bc} | {ratio} | {dratio} |")


if __name__ == "__main__":
    main()
