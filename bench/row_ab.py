#!/usr/bin/env python3
"""Compares ctile_bench runs of two or more builds (an A/B of a compiler change, each build's rows in
its own JSONL file) beside the peers of the same run: per kernel, dtype and shape, each build's
TB/s, the last build's ratio to the first, and each build's ratio to the best peer. Rows that failed
their check show as FAIL; a build without the row shows '-'.

  bench/row_ab.py LABEL=CTILE_JSONL LABEL=CTILE_JSONL [...] [--peers PEERS_JSONL]
"""
import argparse

from row_configs import records


def key(r):
    return (r["kernel"], r["dtype"], tuple(r["shape"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("builds", nargs="+", metavar="LABEL=JSONL")
    ap.add_argument("--peers", default=None)
    a = ap.parse_args()
    builds = []
    for item in a.builds:
        label, sep, path = item.partition("=")
        if not sep or not label or not path:
            ap.error(f"'{item}' is not LABEL=JSONL")
        builds.append((label, path))
    if len(builds) < 2:
        ap.error("an A/B needs at least two builds")
    best_peer = {}
    for r in records(a.peers) if a.peers else []:
        if r.get("ok") and r.get("tbps") and r["tbps"] > best_peer.get(key(r), (0, ""))[0]:
            best_peer[key(r)] = (r["tbps"], r["impl"])
    rows, order = {}, []
    for label, path in builds:
        for r in records(path):
            k = key(r)
            if k not in rows:
                rows[k] = {}
                order.append(k)
            # The first record of a build wins (a build measured once per row).
            rows[k].setdefault(label, r["tbps"] if r.get("ok") and r.get("tbps") else None)
    labels = [b[0] for b in builds]
    first, last = labels[0], labels[-1]
    print("| kernel | dtype | shape | " + " | ".join(f"{b} TB/s" for b in labels) + f" | {last} / {first} | best peer | "
          + " | ".join(f"{b} / peer" for b in labels) + " |")
    print("|" + "---|" * (3 + 2 * len(labels) + 2))
    for k in order:
        by = rows[k]
        cells = [("FAIL" if by[b] is None else f"{by[b]:.2f}") if b in by else "-" for b in labels]
        ab = f"{by[last] / by[first]:.3f}" if by.get(first) and by.get(last) else "-"
        peer = best_peer.get(k)
        ps = f"{peer[0]:.2f} ({peer[1]})" if peer else "-"
        ratios = [f"{by[b] / peer[0]:.2f}x" if peer and by.get(b) else "-" for b in labels]
        shape = "x".join(str(e) for e in k[2])
        print(f"| {k[0]} | {k[1]} | {shape} | " + " | ".join(cells) + f" | {ab} | {ps} | " + " | ".join(ratios) + " |")


if __name__ == "__main__":
    main()
