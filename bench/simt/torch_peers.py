#!/usr/bin/env python3
"""The torch peers of the SIMT benchmarks: torch.sum over the SIMT sum's input size (the target:
the SIMT sum at >= 1.00x torch.sum), and, for context, torch.add and a transpose copy. Timed like
ctile_simt_bench: CUDA events around chains of calls, median over trials after a warm-up; random
non-zero data; the result checked against a float64 sum. One JSON record per line."""
import argparse
import json
import statistics

import torch


def time_ms(fn, iters, trials):
    fn()
    torch.cuda.synchronize()
    per = []
    for t in range(trials + 1):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn()
        stop.record()
        stop.synchronize()
        if t > 0:
            per.append(start.elapsed_time(stop) / iters)
    return statistics.median(per)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--iters", type=int, default=0)
    ap.add_argument("--trials", type=int, default=0)
    a = ap.parse_args()
    iters = a.iters or (3 if a.quick else 20)
    trials = a.trials or (2 if a.quick else 7)
    dev = torch.device("cuda:0")
    name = torch.cuda.get_device_name(dev)
    out = open(a.out, "w") if a.out else None

    def record(kernel, size, nbytes, ms, check):
        r = {"suite": "simt", "kernel": kernel, "impl": "torch", "size": size, "bytes": nbytes, "ms": ms,
             "gbps": nbytes / ms / 1e6, "device": name, "torch": torch.__version__, "check": check}
        print(json.dumps(r))
        if out:
            out.write(json.dumps(r) + "\n")

    n = (1 << 24) if a.quick else (1 << 28)
    x = torch.rand(n, device=dev) * 2 - 1
    ref = x.double().sum().item()
    got = x.sum().item()
    check = "ok" if abs(got - ref) <= 1e-6 * n ** 0.5 + 1e-3 else f"MISMATCH: {got} vs {ref}"
    record("sum", f"{n} f32", 4 * n, time_ms(lambda: torch.sum(x), iters, trials), check)

    n = (1 << 24) if a.quick else (1 << 26)
    p, q, r = torch.rand(n, device=dev), torch.rand(n, device=dev), torch.empty(n, device=dev)
    record("vector_add", f"{n} f32", 12 * n, time_ms(lambda: torch.add(p, q, out=r), iters, trials), "ok")

    s = 4096 if a.quick else 16384
    m, t = torch.rand(s, s, device=dev), torch.empty(s, s, device=dev)
    record("transpose", f"{s}x{s} f32", 8 * s * s, time_ms(lambda: t.copy_(m.t()), iters, trials), "ok")


if __name__ == "__main__":
    main()
