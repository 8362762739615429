#!/usr/bin/env python3
"""torch's CUDA-graph replay of the small kernels of bench/launch_overhead.cpp, as a peer (issue 9).

  graph_chain   1000 chained z = x + 1 on 128 floats (one small kernel each), captured with
                torch.cuda.graph: device time per kernel of a replay (CUDA events around it)
  decode        100 steps cycling add, axpy, RMSNorm, softmax over 4096 floats, each reading the
                previous output: wall time per sequence, eager (launch + synchronize) and graph replay
                (torch spends several kernels on an RMSNorm and two on the axpy step, so its sequence
                has more kernels than ctile's 100: compare the ratios, and the chain per kernel)

One JSON line per measurement (median of --reps after warm-ups), like ctile_launch_overhead's:
  {"bench":"launch_overhead","impl":"torch_graph_chain","what":"device_per_kernel","us":...}
Exit 0 with a note on stderr when torch or a GPU is missing (a peer is optional).

  python3 bench/torch_graph_peer.py [--out FILE] [--reps R]
"""
import argparse
import json
import statistics
import sys
import time

CHAIN, ELEMS, HIDDEN, DECODE = 1000, 128, 4096, 100


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="")
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"torch_graph_peer: torch is not installed ({e}); skipped", file=sys.stderr)
        return 0
    if not torch.cuda.is_available():
        print("torch_graph_peer: no CUDA device for torch; skipped", file=sys.stderr)
        return 0
    dev = torch.device("cuda")
    name = f"{torch.cuda.get_device_name(dev)}, torch {torch.__version__}"
    out = open(args.out, "a") if args.out else None

    def emit(impl, what, unit, samples, n):
        rec = {"bench": "launch_overhead", "impl": impl, "what": what, "us": statistics.median(samples), "unit": unit,
               "n": n, "reps": samples, "device": name}
        line = json.dumps(rec)
        print(line)
        if out:
            out.write(line + "\n")
        return rec["us"]

    side = torch.cuda.Stream()
    # 1. The chain.
    x = torch.ones(ELEMS, device=dev)
    zs = [torch.empty(ELEMS, device=dev) for _ in range(CHAIN)]

    def chain():
        prev = x
        for z in zs:
            torch.add(prev, 1.0, out=z)
            prev = z

    with torch.cuda.stream(side):  # warm up off the default stream before capturing
        chain()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        chain()
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    per_kernel = []
    for _ in range(args.reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        per_kernel.append(a.elapsed_time(b) * 1000.0 / CHAIN)
    if abs(zs[-1][0].item() - (1.0 + CHAIN)) > 1e-3:
        print(f"torch_graph_peer: WRONG RESULT: the chain gave {zs[-1][0].item()}", file=sys.stderr)
        return 1
    emit("torch_graph_chain", "device_per_kernel", "us/kernel", per_kernel, CHAIN)

    # 2. The decode-like sequence.
    inp = torch.rand(HIDDEN, device=dev)
    w = torch.rand(HIDDEN, device=dev)
    bufs = [torch.empty(HIDDEN, device=dev) for _ in range(DECODE)]

    def decode():
        prev = inp
        for i, o in enumerate(bufs[:-1]):
            k = i % 4
            if k == 0:
                torch.add(prev, w, out=o)
            elif k == 1:
                o.copy_(prev).mul_(0.5)  # like axpy into a fresh buffer: two small kernels in torch
            elif k == 2:
                torch.mul(prev * torch.rsqrt(prev.pow(2).mean() + 1e-6), w, out=o)
            else:
                torch.softmax(prev, 0, out=o)
            prev = o
        torch.add(prev, w, out=bufs[-1])

    def timed(fn):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) * 1e6

    for _ in range(2):
        timed(decode)
    eager = [timed(decode) for _ in range(args.reps)]
    with torch.cuda.stream(side):
        decode()
    torch.cuda.synchronize()
    gd = torch.cuda.CUDAGraph()
    with torch.cuda.graph(gd):
        decode()
    for _ in range(3):
        timed(gd.replay)
    graph = [timed(gd.replay) for _ in range(args.reps)]
    e = emit("torch_decode", "eager", "us/sequence", eager, DECODE)
    r = emit("torch_decode", "graph", "us/sequence", graph, DECODE)
    print(f"# torch: chain graph {statistics.median(per_kernel):.3f} us per kernel; decode eager {e:.1f} us, "
          f"graph {r:.1f} us, eager / graph = {e / r:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
