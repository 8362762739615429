#!/usr/bin/env python3
"""Makes the SIMT benchmark table from the JSON records of ctile_simt_bench and torch_peers.py:
for each kernel, the SIMT kernel against the raw CUDA kernel (target >= 0.98x), and the SIMT sum
against torch.sum (target >= 1.00x). Speed ratios are time(peer) / time(SIMT): above 1 the SIMT
kernel is faster.

    report.py RECORDS.jsonl... [--md FILE] [--json FILE] [--meta KEY=VALUE...]"""
import argparse
import json
import sys

TARGETS = {("raw", None): 0.98, ("torch", "sum"): 1.00}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--md")
    ap.add_argument("--json")
    ap.add_argument("--meta", nargs="*", default=[])
    a = ap.parse_args()
    recs = []
    for f in a.files:
        with open(f) as fh:
            recs += [json.loads(l) for l in fh if l.strip().startswith("{")]
    by = {(r["kernel"], r["impl"]): r for r in recs}
    kernels = []
    for r in recs:
        if r["kernel"] not in kernels:
            kernels.append(r["kernel"])
    rows, results, ok_all = [], [], True
    for k in kernels:
        simt = by.get((k, "simt"))
        if not simt:
            continue
        for peer in ("raw", "torch"):
            p = by.get((k, peer))
            if not p:
                continue
            ratio = p["ms"] / simt["ms"]
            target = TARGETS.get((peer, None), TARGETS.get((peer, k)))
            checks = "ok" if simt["check"] == "ok" and p["check"] == "ok" else f"{simt['check']} / {p['check']}"
            met = None if target is None else (ratio >= target and checks == "ok")
            ok_all &= met is not False
            peer_name = "raw CUDA (NVRTC)" if peer == "raw" else "torch " + p.get("torch", "")
            rows.append(f"| {k} | {simt['size']} | {peer_name} | {simt['ms']:.4f} | {p['ms']:.4f} | {ratio:.3f}x | "
                        f"{'-' if target is None else f'>= {target:.2f}x'} | "
                        f"{'-' if met is None else ('met' if met else 'MISSED')} | {simt['gbps']:.0f} | {p['gbps']:.0f} | {checks} |")
            results.append({"kernel": k, "peer": peer, "simt_ms": simt["ms"], "peer_ms": p["ms"], "ratio": ratio,
                            "target": target, "met": met, "simt_gbps": simt["gbps"], "peer_gbps": p["gbps"],
                            "check": checks, "size": simt["size"]})
    device = next((r["device"] for r in recs if r["impl"] == "simt"), "?")
    meta = dict(kv.split("=", 1) for kv in a.meta)
    lines = [f"# SIMT kernels against raw CUDA and torch ({device})", ""]
    if meta:
        lines += [", ".join(f"{k}: {v}" for k, v in meta.items()), ""]
    lines += ["Device time per launch (CUDA events, median of chains after a warm-up). Ratio = peer time / SIMT "
              "time (above 1: the SIMT kernel is faster).", "",
              "| kernel | size | peer | SIMT ms | peer ms | ratio | target | | SIMT GB/s | peer GB/s | checks |",
              "|---|---|---|---|---|---|---|---|---|---|---|"] + rows
    lines += ["", "All targets met." if ok_all else "Some targets MISSED (see above)."]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.md:
        open(a.md, "w").write(text)
    if a.json:
        json.dump({"device": device, "meta": meta, "results": results}, open(a.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
