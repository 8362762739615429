#!/usr/bin/env python3
"""Merges ctile's and the peers' JSON lines into results.json, a Markdown report and a plot.
   report.py --ctile ctile.jsonl --peers peers.jsonl --jit-warm warm.jsonl [--launch launch.jsonl] --out DIR --meta 'text'
ctile's TB/s are device time (StreamTimer: CUDA events around a chain of launches), like the peers'
(triton.testing.do_bench); the host-timed rate of the same chain is listed as well."""
import argparse
import json
import os


def load(path):
    recs = []
    if path and os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line.startswith("{"):
                recs.append(json.loads(line))
    return recs


def key(r):
    return (r.get("kernel"), r.get("dtype"), tuple(r.get("shape", [])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ctile")
    ap.add_argument("--peers")
    ap.add_argument("--jit-warm")
    ap.add_argument("--launch")
    ap.add_argument("--out", required=True)
    ap.add_argument("--meta", default="")
    a = ap.parse_args()
    ctile, peers, warm, launch = load(a.ctile), load(a.peers), load(a.jit_warm), load(a.launch)
    os.makedirs(a.out, exist_ok=True)
    json.dump({"meta": a.meta, "ctile": ctile, "peers": peers, "jit_warm": warm, "launch": launch},
              open(os.path.join(a.out, "results.json"), "w"), indent=1)

    copy = next((p["tbps"] for p in peers if p.get("kernel") == "copy" and "tbps" in p), None)
    lines = [f"# ctile benchmark report\n\n{a.meta}\n"]
    if copy:
        lines.append(f"Measured device-to-device copy (bytes read + written): **{copy:.2f} TB/s**.\n")
    lines.append("| kernel | dtype | shape | ctile TB/s | torch | torch.compile | triton | ctile / best peer | % of copy | ctile host-timed TB/s | rel. error |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for c in ctile:
        k = key(c)
        ps = {p["impl"]: p.get("tbps") for p in peers if key(p) == k and "tbps" in p}
        best = max([v for v in ps.values() if v], default=None)
        ratio = c["tbps"] / best if best else None
        rows.append((c, ps, best, ratio))
        fmt = lambda v: f"{v:.2f}" if v else "-"
        shape = "x".join(map(str, c["shape"]))
        ratio_s = f"{ratio:.2f}x" if ratio else "-"
        copy_s = f"{100 * c['tbps'] / copy:.0f}%" if copy else "-"
        lines.append(f"| {c['kernel']} | {c['dtype']} | {shape} | **{c['tbps']:.2f}** | "
                     f"{fmt(ps.get('torch'))} | {fmt(ps.get('torch.compile'))} | {fmt(ps.get('triton'))} | "
                     f"{ratio_s} | {copy_s} | {fmt(c.get('host_tbps'))} | {c.get('rel_err', 0):.1e} |")
    lines.append("\n## JIT and launch\n")
    lines.append("| kernel | first launch, cold (ms) | first launch, warm disk cache (ms) |")
    lines.append("|---|---|---|")
    for c in ctile:
        w = next((x for x in warm if x.get("kernel") == c["kernel"] and x.get("dtype") == c["dtype"]), None)
        shape = "x".join(map(str, c["shape"]))
        warm_s = f"{w['first_launch_ms']:.1f}" if w else "-"
        lines.append(f"| {c['kernel']} {c['dtype']} {shape} | {c.get('first_launch_ms', 0):.1f} | {warm_s} |")
    tc = next((p for p in peers if p.get("kernel") == "cold_compile_add"), None)
    if tc:
        lines.append(f"\nTriton cold compile of a vector add in the same run: {tc['ms']:.0f} ms.")
    raw = next((p for p in peers if p.get("kernel") == "empty_launch" and "enqueue_us" in p), None)
    if raw:
        lines.append(f"\nRaw cuLaunchKernel of an empty kernel (cupy): enqueue {raw['enqueue_us']:.2f} us, "
                     f"with a sync after each {raw['sync_us']:.2f} us.")
    if launch:
        lines.append("\n## Launch overhead of a cached kernel (bench/launch_overhead.cpp, same cubin)\n")
        lines.append("| impl | what | us per launch |")
        lines.append("|---|---|---|")
        for r in launch:
            if "us_per_launch" in r:
                lines.append(f"| {r.get('impl')} | {r.get('what')} | {r['us_per_launch']:.2f} |")
    for p in peers:
        if "error" in p:
            lines.append(f"\nPeer failure: {p['impl']} {p.get('kernel')}: {p['error']}")
    open(os.path.join(a.out, "report.md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        labels = [c["kernel"] + "\n" + c["dtype"] + " " + "x".join(map(str, c["shape"])) for c, *_ in rows]
        impls = ["ctile", "torch", "torch.compile", "triton"]
        fig, ax = plt.subplots(figsize=(max(8, len(rows) * 1.1), 5))
        width = 0.2
        for j, impl in enumerate(impls):
            vals = [(c["tbps"] if impl == "ctile" else (ps.get(impl) or 0)) for c, ps, _, _ in rows]
            ax.bar([i + (j - 1.5) * width for i in range(len(rows))], vals, width, label=impl)
        if copy:
            ax.axhline(copy, color="k", linestyle="--", linewidth=1, label="copy")
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_ylabel("TB/s (bytes read + written)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(a.out, "plot.png"), dpi=120)
    except Exception as e:  # noqa: BLE001
        print(f"(no plot: {e})")


if __name__ == "__main__":
    main()
