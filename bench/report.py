#!/usr/bin/env python3
"""Merges ctile's and the peers' JSON lines into results.json, report.md and plot.png.

    report.py --ctile ctile.jsonl --peers peers.jsonl [--jit-warm warm.jsonl] [--launch launch.jsonl]
              --out DIR [--meta 'text']

Every figure is per-call device time measured the same way for ctile and the peers (see METHOD).
The best peer of a row is the fastest peer whose result was checked correct. A row whose result is
wrong (relative error over its bound) or that failed is marked in the tables and makes the exit
status 1. A rate above the measured copy ceiling is flagged and never counted as a win.
"""
import argparse
import json
import os
import sys

METHOD = ("Timing, the same for ctile and every peer: per-call device time. Before each call 256 MiB "
          "are written (an L2 flush: the H200's L2 is 60 MiB); CUDA events are recorded around the one "
          "call (ctile: StreamTimer marks on its stream; peers: torch.cuda.Event); the median over the "
          "calls after a warm-up is reported (bench/ctile_bench.cpp time_calls, bench/peers.py "
          "device_time). TB/s = bytes that must move (every input read once, every output written once) "
          "/ that time. Results are checked first against a float64 reference; the bound of each row "
          "comes from the error-bound table (tests/unit/cuda_codegen/error_bounds.hpp, docs/ir.md).")
PEERS = ["torch", "torch.compile", "triton"]
# The checked kernel of the same math (softmax_unchecked computes in the default precision).
UNCHECKED = {"add_unchecked": "add", "softmax_unchecked": "softmax_accurate"}
TRITON_OF = {"add_unchecked": "add", "softmax_unchecked": "softmax"}
# The same kernel in another precision mode: measured against the same peers, not a target row.
SAME_PEERS = {"softmax_accurate": "softmax"}


def load(path):
    recs = []
    if path and os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line.startswith("{"):
                try:
                    recs.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
    return recs


def key(r):
    return (SAME_PEERS.get(r.get("kernel"), r.get("kernel")), r.get("dtype"), tuple(r.get("shape", [])))


def shape_s(r):
    return "x".join(map(str, r.get("shape", [])))


def fmt(v, d=2):
    return f"{v:.{d}f}" if isinstance(v, (int, float)) else "-"


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
    json.dump({"meta": a.meta, "method": METHOD, "ctile": ctile, "peers": peers, "jit_warm": warm, "launch": launch},
              open(os.path.join(a.out, "results.json"), "w"), indent=1)

    problems = []  # wrong results and failures, for the exit status and the summary
    copy = next((p["tbps"] for p in peers if p.get("kernel") == "copy" and p.get("ok") and "tbps" in p), None)
    L = [f"# ctile benchmark report\n\n{a.meta}\n", METHOD + "\n"]
    if copy:
        L.append(f"Measured device-to-device copy (torch, bytes read + written), the ceiling: **{copy:.2f} TB/s**. "
                 "A rate above it is flagged (^) and not counted as a win.\n")
    else:
        L.append("No copy ceiling was measured in this run: rates cannot be checked against it.\n")
        problems.append("no copy ceiling measured")

    timed = [c for c in ctile if not c.get("jit_only")]
    if not timed:
        problems.append("no ctile results")
    if not any(p.get("impl") in PEERS and "tbps" in p for p in peers):
        problems.append("no peer results (see peers.log)")
    L.append("| kernel | dtype | shape | options | ctile TB/s | torch | torch.compile | triton | ctile / best peer | % of copy | rel. error (bound) | status |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for c in timed:
        k = key(c)
        ps = {p["impl"]: p for p in peers if key(p) == k and p.get("impl") in PEERS}
        # Every peer checked correct counts, one above the ceiling too (that errs against ctile).
        good = {i: p["tbps"] for i, p in ps.items() if p.get("ok") and "tbps" in p}
        best = max(good.values(), default=None)
        status = []
        if "error" in c:
            status.append("**FAILED**: " + c["error"][:80])
            problems.append(f"ctile {c['kernel']} {c['dtype']} {shape_s(c)} failed")
        elif not c.get("ok"):
            status.append("**WRONG RESULT**")
            problems.append(f"ctile {c['kernel']} {c['dtype']} {shape_s(c)}: wrong result")
        t = c.get("tbps")
        above = bool(copy and t and t > copy)
        ratio = t / best if (t and best) else None
        if above:
            status.append("^ above the copy ceiling: not a win")
        ratio_s = "-" if ratio is None else (f"({ratio:.2f}x)^" if above else f"{ratio:.2f}x")

        def cell(i):
            p = ps.get(i)
            if not p:
                return "-"
            if "error" in p:
                return "failed"
            s = fmt(p.get("tbps"))
            if not p.get("ok"):
                s += " WRONG"
            elif copy and p.get("tbps", 0) > copy:
                s += "^"
            return s

        for i, p in ps.items():
            if not p.get("ok"):
                problems.append(f"{i} {c['kernel']} {c['dtype']} {shape_s(c)}: " + ("failed" if "error" in p else "wrong result"))
        copy_s = f"{100 * t / copy:.0f}%" if (copy and t) else "-"
        err_s = f"{c['rel_err']:.1e} ({c['err_bound']:.1e})" if "rel_err" in c else "-"
        L.append(f"| {c['kernel']} | {c['dtype']} | {shape_s(c)} | {c.get('options', '-')} | **{fmt(t)}** | {cell('torch')} | "
                 f"{cell('torch.compile')} | {cell('triton')} | {ratio_s} | {copy_s} | {err_s} | {'; '.join(status) or 'ok'} |")
        # Not a win: above the ceiling, or a wrong or failed result.
        counted = ratio if (not above and c.get("ok") and "error" not in c) else None
        rows.append({"c": c, "ps": ps, "best": best, "ratio": counted, "above": above})

    # Peers without a ctile row (the copy, failures, skipped groups).
    for p in peers:
        if p.get("skipped"):
            L.append(f"\nNot measured: {p.get('kernel')}: {p['skipped']}.")
            problems.append(f"peers skipped {p.get('kernel')}")
    for p in peers:
        if p.get("kernel") == "copy" and not p.get("ok"):
            problems.append("copy ceiling: " + p.get("error", "wrong result"))

    # Safety overhead: the same kernel with UncheckedMut stores.
    by_key = {(r["c"].get("kernel"), r["c"].get("dtype"), tuple(r["c"].get("shape", []))): r for r in rows}
    L.append("\n## Safety overhead (checked Mut stores vs UncheckedMut stores, same math)\n")
    L.append("| kernel | dtype | shape | checked ms | unchecked ms | checked / unchecked - 1 | target <= 1% |")
    L.append("|---|---|---|---|---|---|---|")
    safety = []
    for r in rows:
        c = r["c"]
        if c["kernel"] in UNCHECKED:
            chk = by_key.get((UNCHECKED[c["kernel"]], c["dtype"], tuple(c["shape"])))
            if chk and chk["c"].get("ms") and c.get("ms"):
                ov = chk["c"]["ms"] / c["ms"] - 1
                safety.append(ov)
                L.append(f"| {chk['c']['kernel']} | {c['dtype']} | {shape_s(c)} | {chk['c']['ms']:.4f} | {c['ms']:.4f} | "
                         f"{100 * ov:+.2f}% | {'met' if ov <= 0.01 else 'NOT met'} |")

    # JIT: cold first launch (fresh cache) and warm (disk cache hit), next to Triton's cold compile.
    L.append("\n## JIT\n")
    L.append("First launch of each kernel, its inputs and outputs already on the GPU, in a process whose "
             "driver, context and NVRTC are loaded (an unrelated kernel ran first): cold (empty disk cache: "
             "trace, passes, code generation, NVRTC, module load, run) and warm (a second process with the "
             "disk cache filled by the first: trace, passes, code generation, cache hit, module load, run). "
             "Triton: the first call of the same kernel with a constant never compiled before (every cache "
             "misses), same run.\n")
    L.append("| kernel | dtype | shape | cold ms | warm (disk hit) ms | Triton cold ms | cold <= 300 ms and <= Triton | warm <= 5 ms |")
    L.append("|---|---|---|---|---|---|---|---|")
    tcold = {p.get("for"): p.get("ms") for p in peers if p.get("kernel") == "cold_compile" and "ms" in p}
    seen = {}
    warm_by = {}
    for w in warm:
        warm_by.setdefault((w.get("kernel"), w.get("dtype")), []).append(w)
    jit_cold, jit_warm = [], []
    for c in timed:
        kd = (c.get("kernel"), c.get("dtype"))
        idx = seen.get(kd, 0)
        seen[kd] = idx + 1
        wl = warm_by.get(kd, [])
        w = wl[idx] if idx < len(wl) else None
        cold = c.get("first_launch_ms")
        wm = w.get("first_launch_ms") if w else None
        tc = tcold.get(TRITON_OF.get(c["kernel"], c["kernel"]))
        if cold is not None:
            jit_cold.append((cold, tc))
        if wm is not None:
            jit_warm.append(wm)
        ok_cold = "-" if cold is None else ("met" if cold <= 300 and (tc is None or cold <= tc) else "NOT met")
        ok_warm = "-" if wm is None else ("met" if wm <= 5 else "NOT met")
        L.append(f"| {c['kernel']} | {c['dtype']} | {shape_s(c)} | {fmt(cold, 1)} | {fmt(wm, 1)} | {fmt(tc, 0)} | {ok_cold} | {ok_warm} |")

    # Issue 7's targets, checked on this run.
    def verdict(vals, pred):
        if not vals:
            return "not measured"
        bad = [v for v in vals if not pred(v)]
        return "met" if not bad else f"NOT met ({len(bad)} of {len(vals)})"

    def ratios(kernels, dtypes=None, shapes=None):
        out = []
        for r in rows:
            c = r["c"]
            if c["kernel"] in kernels and (dtypes is None or c["dtype"] in dtypes) and (shapes is None or tuple(c["shape"]) in shapes):
                out.append(r["ratio"] if r["ratio"] is not None else -1.0)  # not a win (see above) or no peer
        return out

    orig = {(16384, 1024), (8192, 4096), (4096, 16384)}
    tb_orig = [r["c"].get("tbps", 0) for r in rows
               if r["c"]["kernel"] in ("softmax", "rms_norm", "layer_norm") and r["c"]["dtype"] == "bf16" and tuple(r["c"]["shape"]) in orig]
    targets = [
        ("add and saxpy, f32 / bf16 / f16: >= 1.00x the best peer", verdict(ratios({"add", "saxpy"}), lambda v: v >= 1.0)),
        ("softmax, RMSNorm, LayerNorm bf16: >= 1.00x at every shape",
         verdict(ratios({"softmax", "rms_norm", "layer_norm"}, {"bf16"}), lambda v: v >= 1.0)),
        ("the same at 16384x1024, 8192x4096, 4096x16384: >= 3.6 TB/s", verdict(tb_orig, lambda v: v >= 3.6)),
        ("fused residual add + RMSNorm: >= 1.2x the best peer", verdict(ratios({"add_rms_norm"}), lambda v: v >= 1.2)),
        ("safety overhead (checked vs UncheckedMut): <= 1%", verdict(safety, lambda v: v <= 0.01)),
        ("cold JIT <= 300 ms and <= Triton's cold compile of the same kernel",
         verdict(jit_cold, lambda v: v[0] <= 300 and (v[1] is None or v[0] <= v[1]))),
        ("disk-cache hit <= 5 ms", verdict(jit_warm, lambda v: v <= 5)),
    ]
    L.append("\n## Targets (issue 7)\n")
    L.append("| target | result |")
    L.append("|---|---|")
    for t, v in targets:
        L.append(f"| {t} | {v} |")

    raw = next((p for p in peers if p.get("kernel") == "empty_launch" and "enqueue_us" in p), None)
    if raw:
        L.append(f"\nRaw cuLaunchKernel of an empty kernel (cupy): enqueue {raw['enqueue_us']:.2f} us, "
                 f"with a sync after each {raw['sync_us']:.2f} us.")
    if launch:
        L.append("\n## Launch overhead of a cached kernel (bench/launch_overhead.cpp, same cubin)\n")
        L.append("| impl | what | us per launch |")
        L.append("|---|---|---|")
        for r in launch:
            if "us_per_launch" in r:
                L.append(f"| {r.get('impl')} | {r.get('what')} | {r['us_per_launch']:.2f} |")
    for p in peers:
        if "error" in p and p.get("kernel") in ("cold_compile", "empty_launch"):
            L.append(f"\nPeer step failed: {p['impl']} {p.get('kernel')} {p.get('for', '')}: {p['error']}")
    L.append("\n## Problems\n")
    L.append("\n".join(f"- {p}" for p in problems) if problems else "None: every result checked correct.")
    open(os.path.join(a.out, "report.md"), "w").write("\n".join(L) + "\n")
    # A few lines for scripts/gpu_all.sh's summary.
    with open(os.path.join(a.out, "report_summary.txt"), "w") as f:
        f.write(f"copy ceiling: {copy:.2f} TB/s\n" if copy else "copy ceiling: not measured\n")
        for t, v in targets:
            f.write(f"target: {t}: {v}\n")
        f.write(f"rows: {len(rows)} ({sum(1 for r in rows if r['ratio'] is not None and r['ratio'] >= 1)} at >= 1.00x the best peer)\n")
        f.write(f"problems: {len(problems)}\n")
        for p in problems[:12]:
            f.write(f"  {p}\n")
    print("\n".join(L))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        labels = [r["c"]["kernel"] + "\n" + r["c"]["dtype"] + " " + shape_s(r["c"]) for r in rows]
        impls = ["ctile"] + PEERS
        fig, ax = plt.subplots(figsize=(max(8, len(rows) * 0.9), 5))
        width = 0.2
        for j, impl in enumerate(impls):
            vals = [(r["c"].get("tbps") or 0) if impl == "ctile" else (r["ps"].get(impl, {}).get("tbps") or 0) for r in rows]
            ax.bar([i + (j - 1.5) * width for i in range(len(rows))], vals, width, label=impl)
        if copy:
            ax.axhline(copy, color="k", linestyle="--", linewidth=1, label="copy ceiling")
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels(labels, fontsize=6, rotation=90)
        ax.set_ylabel("TB/s (bytes read + written), per-call device time")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(a.out, "plot.png"), dpi=120)
    except Exception as e:  # noqa: BLE001
        print(f"(no plot: {e})")
    if problems:
        print(f"\nreport: {len(problems)} problem(s): " + "; ".join(problems[:10]), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
