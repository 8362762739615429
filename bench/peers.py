#!/usr/bin/env python3
"""Peers measured in the same run as ctile: torch eager, torch.compile and Triton (tutorial-style
kernels) for the kernels of bench/ctile_bench.cpp, plus the device-to-device copy ceiling and the
launch cost of an empty raw kernel. Method as in PERFORMANCE.md: random non-zero data, results
checked first, CUDA-event timing via triton.testing.do_bench (median), inputs rotated so repeated
runs do not measure the L2. Writes one JSON record per line to --out."""
import argparse
import json
import math
import sys
import time

import torch

try:
    import triton
    import triton.language as tl
    from triton.testing import do_bench
except Exception:  # noqa: BLE001
    triton = None

SETS = 3
OUT = None


def emit(rec):
    print(json.dumps(rec), flush=True)
    if OUT:
        OUT.write(json.dumps(rec) + "\n")
        OUT.flush()


def bench(fn_of_set, bytes_moved, impl, kernel, dtype, shape):
    """Median ms of fn_of_set(i) rotating over the input sets."""
    state = {"i": 0}

    def call():
        state["i"] = (state["i"] + 1) % SETS
        fn_of_set(state["i"])

    try:
        ms = do_bench(call, warmup=50, rep=300, return_mode="median") if triton else _events(call)
    except Exception as e:  # noqa: BLE001
        emit({"impl": impl, "kernel": kernel, "dtype": dtype, "shape": shape, "error": str(e)[:300]})
        return
    emit({"impl": impl, "kernel": kernel, "dtype": dtype, "shape": shape, "bytes": bytes_moved, "ms": ms,
          "tbps": bytes_moved / (ms * 1e-3) / 1e12})


def _events(call, reps=50):
    for _ in range(5):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        call()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


if triton:
    @triton.jit
    def _add_kernel(x, y, z, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        a = tl.load(x + offs, mask=m).to(tl.float32)
        b = tl.load(y + offs, mask=m).to(tl.float32)
        tl.store(z + offs, (a + b).to(z.dtype.element_ty), mask=m)

    @triton.jit
    def _saxpy_kernel(x, y, a, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        xv = tl.load(x + offs, mask=m).to(tl.float32)
        yv = tl.load(y + offs, mask=m).to(tl.float32)
        tl.store(y + offs, (a * xv + yv).to(y.dtype.element_ty), mask=m)

    @triton.jit
    def _softmax_kernel(out, x, stride, n, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        v = tl.load(x + row * stride + cols, mask=cols < n, other=-float("inf")).to(tl.float32)
        v = v - tl.max(v, axis=0)
        e = tl.exp(v)
        tl.store(out + row * stride + cols, (e / tl.sum(e, axis=0)).to(tl.bfloat16), mask=cols < n)

    @triton.jit
    def _rmsnorm_kernel(out, x, w, stride, n, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        m = cols < n
        v = tl.load(x + row * stride + cols, mask=m, other=0.0).to(tl.float32)
        inv = 1.0 / tl.sqrt(tl.sum(v * v, axis=0) / n + eps)
        wv = tl.load(w + cols, mask=m).to(tl.float32)
        tl.store(out + row * stride + cols, (v * inv * wv).to(tl.bfloat16), mask=m)

    @triton.jit
    def _layernorm_kernel(out, x, w, b, stride, n, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        m = cols < n
        v = tl.load(x + row * stride + cols, mask=m, other=0.0).to(tl.float32)
        mean = tl.sum(v, axis=0) / n
        d = tl.where(m, v - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n + eps)
        wv = tl.load(w + cols, mask=m).to(tl.float32)
        bv = tl.load(b + cols, mask=m).to(tl.float32)
        tl.store(out + row * stride + cols, (d * rstd * wv + bv).to(tl.bfloat16), mask=m)


def rel(a, b):
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm()).item()


def elementwise(n32, quick):
    for dtype, name, n in ((torch.float32, "f32", n32), (torch.bfloat16, "bf16", n32 * 2)):
        xs = [torch.randn(n, device="cuda", dtype=dtype) for _ in range(SETS)]
        ys = [torch.randn(n, device="cuda", dtype=dtype) for _ in range(SETS)]
        z = torch.empty(n, device="cuda", dtype=dtype)
        nbytes = 3 * n * xs[0].element_size()
        bench(lambda i: torch.add(xs[i], ys[i], out=z), nbytes, "torch", "add", name, [n])
        cadd = torch.compile(lambda a, b: a + b)
        cadd(xs[0], ys[0])
        bench(lambda i: cadd(xs[i], ys[i]), nbytes, "torch.compile", "add", name, [n])
        if triton:
            blk = 1024
            grid = (triton.cdiv(n, blk),)
            _add_kernel[grid](xs[0], ys[0], z, n, BLOCK=blk)
            assert rel(z, (xs[0].float() + ys[0].float()).to(dtype)) < 1e-2
            bench(lambda i: _add_kernel[grid](xs[i], ys[i], z, n, BLOCK=blk), nbytes, "triton", "add", name, [n])
        y = torch.randn(n, device="cuda", dtype=dtype)
        bench(lambda i: y.add_(xs[i], alpha=0.5), nbytes, "torch", "saxpy", name, [n])
        if triton:
            blk = 1024
            grid = (triton.cdiv(n, blk),)
            bench(lambda i: _saxpy_kernel[grid](xs[i], y, 0.5, n, BLOCK=blk), nbytes, "triton", "saxpy", name, [n])
        del xs, ys, z, y
        torch.cuda.empty_cache()


def rows(shapes):
    eps = 1e-5
    for r, c in shapes:
        xs = [torch.randn(r, c, device="cuda", dtype=torch.bfloat16) for _ in range(SETS)]
        w = (torch.rand(c, device="cuda") + 0.5).to(torch.bfloat16)
        b = torch.randn(c, device="cuda", dtype=torch.bfloat16)
        out = torch.empty_like(xs[0])
        nbytes = 2 * r * c * 2
        blk = triton.next_power_of_2(c) if triton else 0
        nw = 4 if c <= 1024 else (8 if c <= 4096 else 16)
        # softmax
        bench(lambda i: torch.softmax(xs[i], dim=-1), nbytes, "torch", "softmax", "bf16", [r, c])
        csm = torch.compile(lambda a: torch.softmax(a.float(), dim=-1).to(torch.bfloat16))
        csm(xs[0])
        bench(lambda i: csm(xs[i]), nbytes, "torch.compile", "softmax", "bf16", [r, c])
        if triton:
            _softmax_kernel[(r,)](out, xs[0], c, c, BLOCK=blk, num_warps=nw)
            assert rel(out, torch.softmax(xs[0].float(), -1)) < 1e-2
            bench(lambda i: _softmax_kernel[(r,)](out, xs[i], c, c, BLOCK=blk, num_warps=nw), nbytes, "triton",
                  "softmax", "bf16", [r, c])
        # rms norm
        def rms_eager(a):
            af = a.float()
            return (af * torch.rsqrt(af.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(torch.bfloat16)
        bench(lambda i: rms_eager(xs[i]), nbytes + c * 2, "torch", "rms_norm", "bf16", [r, c])
        crms = torch.compile(rms_eager)
        crms(xs[0])
        bench(lambda i: crms(xs[i]), nbytes + c * 2, "torch.compile", "rms_norm", "bf16", [r, c])
        if triton:
            _rmsnorm_kernel[(r,)](out, xs[0], w, c, c, eps, BLOCK=blk, num_warps=nw)
            assert rel(out, rms_eager(xs[0])) < 1e-2
            bench(lambda i: _rmsnorm_kernel[(r,)](out, xs[i], w, c, c, eps, BLOCK=blk, num_warps=nw),
                  nbytes + c * 2, "triton", "rms_norm", "bf16", [r, c])
        # layer norm
        ln = torch.nn.functional.layer_norm
        bench(lambda i: ln(xs[i], (c,), w, b, eps), nbytes + 2 * c * 2, "torch", "layer_norm", "bf16", [r, c])
        cln = torch.compile(lambda a: ln(a, (c,), w, b, eps))
        cln(xs[0])
        bench(lambda i: cln(xs[i]), nbytes + 2 * c * 2, "torch.compile", "layer_norm", "bf16", [r, c])
        if triton:
            _layernorm_kernel[(r,)](out, xs[0], w, b, c, c, eps, BLOCK=blk, num_warps=nw)
            assert rel(out, ln(xs[0].float(), (c,), w.float(), b.float(), eps)) < 1e-2
            bench(lambda i: _layernorm_kernel[(r,)](out, xs[i], w, b, c, c, eps, BLOCK=blk, num_warps=nw),
                  nbytes + 2 * c * 2, "triton", "layer_norm", "bf16", [r, c])
        del xs, out
        torch.cuda.empty_cache()


def reduction(n):
    xs = [torch.rand(n, device="cuda") for _ in range(SETS)]
    bench(lambda i: torch.sum(xs[i]), 4 * n, "torch", "sum", "f32", [n])


def copy_ceiling(n):
    a = torch.randn(n, device="cuda")
    b = torch.empty_like(a)
    bench(lambda i: b.copy_(a), 2 * 4 * n, "torch", "copy", "f32", [n])


def launch_overhead():
    """Raw cuLaunchKernel of an empty kernel through cupy: host enqueue and sync-after-each."""
    try:
        import cupy
    except Exception as e:  # noqa: BLE001
        emit({"impl": "raw", "kernel": "empty_launch", "error": str(e)[:200]})
        return
    k = cupy.RawKernel(r'extern "C" __global__ void empty() {}', "empty")
    k((1,), (32,), ())
    cupy.cuda.Device().synchronize()
    n = 20000
    t0 = time.perf_counter()
    for _ in range(n):
        k((1,), (32,), ())
    enq = (time.perf_counter() - t0) / n * 1e6
    cupy.cuda.Device().synchronize()
    t0 = time.perf_counter()
    for _ in range(2000):
        k((1,), (32,), ())
        cupy.cuda.Device().synchronize()
    sync = (time.perf_counter() - t0) / 2000 * 1e6
    emit({"impl": "raw", "kernel": "empty_launch", "enqueue_us": enq, "sync_us": sync})


def triton_cold_compile():
    if not triton:
        return
    # A fresh kernel body (a unique constant) defeats Triton's caches.
    src_const = int(time.time() * 1000) % 100000
    x = torch.randn(4096, device="cuda")
    z = torch.empty_like(x)

    @triton.jit
    def fresh_add(x, z, n, C: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(z + offs, tl.load(x + offs, mask=offs < n) + C, mask=offs < n)

    t0 = time.perf_counter()
    fresh_add[(4,)](x, z, 4096, C=src_const, BLOCK=1024)
    torch.cuda.synchronize()
    emit({"impl": "triton", "kernel": "cold_compile_add", "ms": (time.perf_counter() - t0) * 1e3})


def main():
    global OUT
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=["elementwise", "rows", "reduction"], help="run one group (plus the copy ceiling)")
    a = ap.parse_args()
    OUT = open(a.out, "a") if a.out else None
    torch.manual_seed(0)
    print(f"peers on {torch.cuda.get_device_name()}, torch {torch.__version__}, triton "
          f"{triton.__version__ if triton else 'absent'}", file=sys.stderr)
    n32 = (1 << 24) if a.quick else (1 << 26)
    if a.only is None:
        triton_cold_compile()
    copy_ceiling(1 << 28)
    if a.only is None:
        launch_overhead()
    if a.only in (None, "elementwise"):
        elementwise(n32, a.quick)
    if a.only in (None, "rows"):
        rows([(16384, 1024), (8192, 4096), (4096, 16384)])
    if a.only in (None, "reduction"):
        reduction(n32)


if __name__ == "__main__":
    main()
