#!/usr/bin/env python3
"""Runs the Triton peer of a row kernel (bench/peers.py's kernel, not autotuned) at the benchmark's
row shapes once per num_warps, a few times each, for a profiler (bench/row_profile.sh runs it under
ncu). Usage: row_profile_triton.py KERNEL [--warps 4,8,16,32] [--shapes 4096x16384,...] [--calls 3]"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("kernel", choices=["layer_norm", "rms_norm", "softmax"])
ap.add_argument("--warps", default="4,8,16,32")
ap.add_argument("--shapes", default="16384x1024,8192x4096,4096x16384,32768x1000,8192x5120,1024x32768")
ap.add_argument("--calls", type=int, default=3)
a = ap.parse_args()

for shape in a.shapes.split(","):
    r, c = (int(v) for v in shape.split("x"))
    blk = 1 << (c - 1).bit_length()
    x = torch.randn(r, c, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(c, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(c, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(x)
    for nw in (int(v) for v in a.warps.split(",")):
        for _ in range(a.calls):
            if a.kernel == "layer_norm":
                peers.t_layer_norm.fn[(r,)](out, x, w, b, c, r, c, 1e-5, BLOCK=blk, SALT=0, num_warps=nw)
            elif a.kernel == "rms_norm":
                peers.t_rms_norm.fn[(r,)](out, x, w, c, r, c, 1e-5, BLOCK=blk, SALT=0, num_warps=nw)
            else:
                peers.t_softmax.fn[(r,)](out, x, c, r, c, BLOCK=blk, SALT=0, num_warps=nw)
    torch.cuda.synchronize()
    print(f"{a.kernel} {shape}: done", flush=True)
