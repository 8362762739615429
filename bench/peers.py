#!/usr/bin/env python3
"""The peers of bench/ctile_bench.cpp, measured in the same run: torch eager, torch.compile and
Triton (autotuned) for every kernel of the ctile benchmark, the device-to-device copy ceiling, the
launch cost of an empty raw kernel, and Triton's cold compile of each kernel.

Timing is ctile_bench's (device_time below): per call device time. Before each call a 256 MiB
write (FLUSH.zero_()) evicts the 60 MiB L2; CUDA events are recorded around the one call; the
median of the calls after a warm-up is reported. Every result is first checked against a float64
reference: a relative L2 error over the row's bound (ctile's bound for the same row, read from
--ctile-results, which takes it from the error-bound table) marks the row wrong and makes the exit
status non-zero, as does a peer that raises.

    peers.py [--quick] [--out FILE] [--ctile-results ctile.jsonl] [--deadline UNIX_TIME]
             [--only elementwise|rows|fused|reduction] [--shapes RxC,...]

Past --deadline the remaining groups are not run; each is recorded as skipped (never silently).
"""
import argparse
import json
import math
import os
import random
import statistics
import sys
import time

import torch
import torch.nn.functional as F

try:
    import triton
    import triton.language as tl
except Exception as e:  # noqa: BLE001
    triton = None
    TRITON_ERROR = str(e)

REPS, WARMUP = 100, 10
FLUSH = None  # 256 MiB, written before each timed call
OUT = None
BOUNDS = {}
FAILURES = 0
DEADLINE = None
SALT = random.randrange(1, 1 << 30)  # makes Triton's cold compiles miss every cache
DTYPES = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16"}
EPS = {"f32": 2.0 ** -23, "bf16": 2.0 ** -7, "f16": 2.0 ** -10}


def emit(rec):
    print(json.dumps(rec), flush=True)
    if OUT:
        OUT.write(json.dumps(rec) + "\n")
        OUT.flush()


def device_time(fn):
    """Median ms of fn() per call: L2 flushed before each call, CUDA events around it."""
    for _ in range(WARMUP):
        FLUSH.zero_()
        fn()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(REPS)]
    for start, end in events:
        FLUSH.zero_()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in events)


def rel(got, ref):
    got, ref = got.double(), ref.double()
    if torch.isnan(got).any():
        return math.inf
    return ((got - ref).norm() / ref.norm()).item()


def bound_for(kernel, dtype, shape):
    """ctile's bound for the row (the error-bound table); without it one ulp of the output plus the
    largest composite bound of the table at these widths (200 ulps of f32)."""
    b = BOUNDS.get((kernel, dtype, tuple(shape)))
    return b if b is not None else EPS[dtype] + 200 * EPS["f32"]


def measure(impl, kernel, dtype, shape, nbytes, fn, check, extra=None):
    """Checks the result (check() -> relative L2 error), then times fn; one record."""
    global FAILURES
    rec = {"impl": impl, "kernel": kernel, "dtype": dtype, "shape": list(shape), "bytes": nbytes}
    if extra:
        rec.update(extra)
    try:
        err = check()
        bound = bound_for(kernel, dtype, shape)
        rec.update(rel_err=err, err_bound=bound, ok=bool(err <= bound))
        if not rec["ok"]:
            FAILURES += 1
            print(f"peers: WRONG RESULT: {impl} {kernel} {dtype} {shape}: relative error {err:.3e} over {bound:.3e}",
                  file=sys.stderr)
        ms = device_time(fn)
        rec.update(ms=ms, tbps=nbytes / (ms * 1e-3) / 1e12, calls=REPS)
    except Exception as e:  # noqa: BLE001
        FAILURES += 1
        rec.update(ok=False, error=f"{type(e).__name__}: {str(e)[:300]}")
        print(f"peers: {impl} {kernel} {dtype} {shape} failed: {rec['error']}", file=sys.stderr)
    emit(rec)


def compiled(fn):
    """torch.compile in its default mode, specialised to the shape (as ctile and Triton are)."""
    return torch.compile(fn, dynamic=False)


def past_deadline(group):
    if DEADLINE is not None and time.time() > DEADLINE:
        emit({"impl": "peers", "kernel": group, "skipped": "time budget of the run exhausted"})
        print(f"peers: {group}: skipped (time budget)", file=sys.stderr)
        return True
    return False


# ---- Triton kernels (autotuned) ------------------------------------------------------------------------
# Element-wise kernels and the row kernels are straight-line code (a row is one program's tile):
# their spaces are BLOCK x num_warps and num_warps; num_stages only pipelines loops, so it is tuned
# for the sum, whose programs loop over the tensor.

if triton:
    ELEM = [triton.Config({"BLOCK": b}, num_warps=w) for b in (1024, 2048, 4096) for w in (4, 8)]
    ROW = [triton.Config({}, num_warps=w) for w in (4, 8, 16, 32)]
    SUM = [triton.Config({"BLOCK": b}, num_warps=w, num_stages=s) for b in (1024, 4096) for w in (4, 8) for s in (1, 3)]

    @triton.autotune(configs=ELEM, key=["n"])
    @triton.jit
    def t_add(x, y, z, n, BLOCK: tl.constexpr, SALT: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        a = tl.load(x + offs, mask=m).to(tl.float32)
        b = tl.load(y + offs, mask=m).to(tl.float32)
        tl.store(z + offs, (a + b).to(z.dtype.element_ty), mask=m)

    @triton.autotune(configs=ELEM, key=["n"], restore_value=["y"])
    @triton.jit
    def t_saxpy(x, y, a, n, BLOCK: tl.constexpr, SALT: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        xv = tl.load(x + offs, mask=m).to(tl.float32)
        yv = tl.load(y + offs, mask=m).to(tl.float32)
        tl.store(y + offs, (a * xv + yv).to(y.dtype.element_ty), mask=m)

    @triton.autotune(configs=ROW, key=["n_rows", "n_cols"])
    @triton.jit
    def t_softmax(out, x, stride, n_rows, n_cols, BLOCK: tl.constexpr, SALT: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        m = cols < n_cols
        v = tl.load(x + row * stride + cols, mask=m, other=-float("inf")).to(tl.float32)
        e = tl.exp(v - tl.max(v, axis=0))
        tl.store(out + row * stride + cols, (e / tl.sum(e, axis=0)).to(out.dtype.element_ty), mask=m)

    @triton.autotune(configs=ROW, key=["n_rows", "n_cols"])
    @triton.jit
    def t_rms_norm(out, x, w, stride, n_rows, n_cols, eps, BLOCK: tl.constexpr, SALT: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        m = cols < n_cols
        v = tl.load(x + row * stride + cols, mask=m, other=0.0).to(tl.float32)
        inv = tl.rsqrt(tl.sum(v * v, axis=0) / n_cols + eps)
        wv = tl.load(w + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(out + row * stride + cols, (v * inv * wv).to(out.dtype.element_ty), mask=m)

    @triton.autotune(configs=ROW, key=["n_rows", "n_cols"])
    @triton.jit
    def t_layer_norm(out, x, w, b, stride, n_rows, n_cols, eps, BLOCK: tl.constexpr, SALT: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        m = cols < n_cols
        v = tl.load(x + row * stride + cols, mask=m, other=0.0).to(tl.float32)
        mean = tl.sum(v, axis=0) / n_cols
        d = tl.where(m, v - mean, 0.0)
        rstd = tl.rsqrt(tl.sum(d * d, axis=0) / n_cols + eps)
        wv = tl.load(w + cols, mask=m, other=0.0).to(tl.float32)
        bv = tl.load(b + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(out + row * stride + cols, (d * rstd * wv + bv).to(out.dtype.element_ty), mask=m)

    @triton.autotune(configs=ROW, key=["n_rows", "n_cols"])
    @triton.jit
    def t_add_rms_norm(h, y, x, r, w, stride, n_rows, n_cols, eps, BLOCK: tl.constexpr, SALT: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        m = cols < n_cols
        hs = (tl.load(x + row * stride + cols, mask=m, other=0.0).to(tl.float32) +
              tl.load(r + row * stride + cols, mask=m, other=0.0).to(tl.float32)).to(h.dtype.element_ty)
        tl.store(h + row * stride + cols, hs, mask=m)
        hf = hs.to(tl.float32)
        inv = tl.rsqrt(tl.sum(hf * hf, axis=0) / n_cols + eps)
        wv = tl.load(w + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(y + row * stride + cols, (hf * inv * wv).to(y.dtype.element_ty), mask=m)

    @triton.autotune(configs=SUM, key=["n"], reset_to_zero=["out"])
    @triton.jit
    def t_sum(x, out, n, BLOCK: tl.constexpr, SALT: tl.constexpr):
        pid = tl.program_id(0).to(tl.int64)
        step = tl.num_programs(0).to(tl.int64) * BLOCK
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(pid * BLOCK, n, step):  # pipelined over num_stages
            offs = start + tl.arange(0, BLOCK)
            acc += tl.load(x + offs, mask=offs < n, other=0.0)
        tl.atomic_add(out, tl.sum(acc, axis=0))

    @triton.jit
    def t_warm(x, SALT: tl.constexpr):
        tl.store(x + tl.arange(0, 32), tl.arange(0, 32).to(tl.float32) + SALT)


def cold_compile(kernel, launch):
    """Triton's cold compile of `kernel`: the first call of its JIT function with a SALT never seen
    before (every cache misses), one fixed config, on small inputs, until the GPU is done."""
    if not triton:
        return
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    try:
        launch(SALT)
        torch.cuda.synchronize()
        emit({"impl": "triton", "kernel": "cold_compile", "for": kernel, "ms": (time.perf_counter() - t0) * 1e3})
    except Exception as e:  # noqa: BLE001
        emit({"impl": "triton", "kernel": "cold_compile", "for": kernel, "error": str(e)[:300]})


def triton_cold_compiles():
    x = torch.randn(4096, device="cuda")
    y = torch.randn(4096, device="cuda")
    z = torch.empty_like(x)
    m = torch.randn(8, 1024, device="cuda", dtype=torch.bfloat16)
    o, o2 = torch.empty_like(m), torch.empty_like(m)
    w = torch.ones(1024, device="cuda", dtype=torch.bfloat16)
    s = torch.zeros(1, device="cuda")
    # The process's one-time start-up is not charged to the first kernel (as in ctile_bench).
    t_warm[(1,)](z, SALT=SALT)
    torch.cuda.synchronize()
    cold_compile("add", lambda salt: t_add.fn[(4,)](x, y, z, 4096, BLOCK=1024, SALT=salt, num_warps=4))
    cold_compile("saxpy", lambda salt: t_saxpy.fn[(4,)](x, y, 0.5, 4096, BLOCK=1024, SALT=salt, num_warps=4))
    cold_compile("softmax", lambda salt: t_softmax.fn[(8,)](o, m, 1024, 8, 1024, BLOCK=1024, SALT=salt, num_warps=4))
    cold_compile("rms_norm", lambda salt: t_rms_norm.fn[(8,)](o, m, w, 1024, 8, 1024, 1e-5, BLOCK=1024, SALT=salt, num_warps=4))
    cold_compile("layer_norm",
                 lambda salt: t_layer_norm.fn[(8,)](o, m, w, w, 1024, 8, 1024, 1e-5, BLOCK=1024, SALT=salt, num_warps=4))
    cold_compile("add_rms_norm",
                 lambda salt: t_add_rms_norm.fn[(8,)](o, o2, m, m, w, 1024, 8, 1024, 1e-5, BLOCK=1024, SALT=salt, num_warps=4))
    cold_compile("sum", lambda salt: t_sum.fn[(4,)](x, s, 4096, BLOCK=1024, SALT=salt, num_warps=4))


# ---- groups ---------------------------------------------------------------------------------------------

def elementwise(n32):
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        if not past_deadline(f"elementwise {DTYPES[dtype]}"):
            elementwise_one(dtype, n32)
            torch.cuda.empty_cache()


def elementwise_one(dtype, n32):
    """One dtype (its tensors are freed on return)."""
    dn = DTYPES[dtype]
    n = n32 if dtype == torch.float32 else 2 * n32
    x = torch.randn(n, device="cuda", dtype=dtype)
    y = torch.randn(n, device="cuda", dtype=dtype)
    z = torch.empty_like(x)
    nbytes = 3 * n * x.element_size()
    ref = x.double() + y.double()

    def check_into(run):
        z.fill_(float("nan"))
        run()
        return rel(z, ref)

    measure("torch", "add", dn, [n], nbytes, lambda: torch.add(x, y, out=z), lambda: check_into(lambda: torch.add(x, y, out=z)))
    cadd = compiled(lambda a, b: a + b)
    measure("torch.compile", "add", dn, [n], nbytes, lambda: cadd(x, y), lambda: rel(cadd(x, y), ref))
    if triton:
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)  # noqa: E731
        run = lambda: t_add[grid](x, y, z, n, SALT=0)  # noqa: E731
        measure("triton", "add", dn, [n], nbytes, run, lambda: check_into(run))
    # saxpy: y = 0.5 * x + y, in place (as ctile's)
    y2 = y.clone()
    sref = 0.5 * x.double() + y.double()

    def check_saxpy(run):
        y2.copy_(y)
        run()
        return rel(y2, sref)

    measure("torch", "saxpy", dn, [n], nbytes, lambda: y2.add_(x, alpha=0.5), lambda: check_saxpy(lambda: y2.add_(x, alpha=0.5)))
    csax = compiled(lambda a, b: b.add_(a, alpha=0.5))
    measure("torch.compile", "saxpy", dn, [n], nbytes, lambda: csax(x, y2), lambda: check_saxpy(lambda: csax(x, y2)))
    if triton:
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)  # noqa: E731
        run = lambda: t_saxpy[grid](x, y2, 0.5, n, SALT=0)  # noqa: E731
        measure("triton", "saxpy", dn, [n], nbytes, run, lambda: check_saxpy(run))


def rms_ref(a, w, eps):
    a = a.double()
    return a * torch.rsqrt(a.pow(2).mean(-1, keepdim=True) + eps) * w.double()


def rows(shapes, f32_shape):
    eps = 1e-5
    jobs = [(r, c, torch.bfloat16) for r, c in shapes]
    if f32_shape:
        jobs.append((f32_shape[0], f32_shape[1], torch.float32))
    for r, c, dtype in jobs:
        if not past_deadline(f"rows {DTYPES[dtype]} {r}x{c}"):
            rows_one(r, c, dtype, eps)
            torch.cuda.empty_cache()


def rows_one(r, c, dtype, eps):
    """One shape (its tensors are freed on return)."""
    dn = DTYPES[dtype]
    x = torch.randn(r, c, device="cuda", dtype=dtype)
    w = (torch.rand(c, device="cuda") + 0.5).to(dtype)
    b = torch.randn(c, device="cuda", dtype=dtype)
    out = torch.empty_like(x)
    es = x.element_size()
    blk = triton.next_power_of_2(c) if triton else 0
    shape = [r, c]

    def into(run, ref):
        out.fill_(float("nan"))
        run()
        return rel(out, ref)

    # softmax
    nbytes = 2 * r * c * es
    ref = torch.softmax(x.double(), -1)
    measure("torch", "softmax", dn, shape, nbytes, lambda: torch.softmax(x, -1), lambda: rel(torch.softmax(x, -1), ref))
    csm = compiled(lambda a: torch.softmax(a, -1))
    measure("torch.compile", "softmax", dn, shape, nbytes, lambda: csm(x), lambda: rel(csm(x), ref))
    if triton:
        run = lambda: t_softmax[(r,)](out, x, c, r, c, BLOCK=blk, SALT=0)  # noqa: E731
        measure("triton", "softmax", dn, shape, nbytes, run, lambda: into(run, ref))
    # RMSNorm (eager: the composite in f32, five kernels)
    nbytes = 2 * r * c * es + c * es
    ref = rms_ref(x, w, eps)

    def rms_eager(a):
        af = a.float()
        return (af * torch.rsqrt(af.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(a.dtype)

    measure("torch", "rms_norm", dn, shape, nbytes, lambda: rms_eager(x), lambda: rel(rms_eager(x), ref))
    crms = compiled(rms_eager)
    measure("torch.compile", "rms_norm", dn, shape, nbytes, lambda: crms(x), lambda: rel(crms(x), ref))
    if triton:
        run = lambda: t_rms_norm[(r,)](out, x, w, c, r, c, eps, BLOCK=blk, SALT=0)  # noqa: E731
        measure("triton", "rms_norm", dn, shape, nbytes, run, lambda: into(run, ref))
    # LayerNorm
    nbytes = 2 * r * c * es + 2 * c * es
    ref = F.layer_norm(x.double(), (c,), w.double(), b.double(), eps)
    measure("torch", "layer_norm", dn, shape, nbytes, lambda: F.layer_norm(x, (c,), w, b, eps),
            lambda: rel(F.layer_norm(x, (c,), w, b, eps), ref))
    cln = compiled(lambda a: F.layer_norm(a, (c,), w, b, eps))
    measure("torch.compile", "layer_norm", dn, shape, nbytes, lambda: cln(x), lambda: rel(cln(x), ref))
    if triton:
        run = lambda: t_layer_norm[(r,)](out, x, w, b, c, r, c, eps, BLOCK=blk, SALT=0)  # noqa: E731
        measure("triton", "layer_norm", dn, shape, nbytes, run, lambda: into(run, ref))


def fused(shapes):
    """Residual add + RMSNorm writing h = x + r and y = rmsnorm(h) * w (bf16)."""
    for r, c in shapes:
        if not past_deadline(f"add_rms_norm {r}x{c}"):
            fused_one(r, c, 1e-5)
            torch.cuda.empty_cache()


def fused_one(r, c, eps):
    """One shape (its tensors are freed on return)."""
    dtype = torch.bfloat16
    x = torch.randn(r, c, device="cuda", dtype=dtype)
    res = torch.randn(r, c, device="cuda", dtype=dtype)
    w = (torch.rand(c, device="cuda") + 0.5).to(dtype)
    h, y = torch.empty_like(x), torch.empty_like(x)
    nbytes = 4 * r * c * 2 + c * 2
    h_ref = (x.float() + res.float()).to(dtype)  # h as stored (bf16), the norm's input
    y_ref = rms_ref(h_ref, w, eps)
    shape = [r, c]

    def eager(a, b):  # two launches and more: the add, then the RMSNorm composite
        hh = a + b
        hf = hh.float()
        return hh, (hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(dtype)

    def check(fn):
        hh, yy = fn()
        return max(rel(hh, x.double() + res.double()), rel(yy, y_ref))

    measure("torch", "add_rms_norm", "bf16", shape, nbytes, lambda: eager(x, res), lambda: check(lambda: eager(x, res)))
    cf = compiled(eager)
    measure("torch.compile", "add_rms_norm", "bf16", shape, nbytes, lambda: cf(x, res), lambda: check(lambda: cf(x, res)))
    if triton:
        blk = triton.next_power_of_2(c)
        run = lambda: t_add_rms_norm[(r,)](h, y, x, res, w, c, r, c, eps, BLOCK=blk, SALT=0)  # noqa: E731

        def check_t():
            h.fill_(float("nan"))
            y.fill_(float("nan"))
            run()
            return max(rel(h, x.double() + res.double()), rel(y, y_ref))

        measure("triton", "add_rms_norm", "bf16", shape, nbytes, run, check_t)


def reduction(n):
    if past_deadline("sum"):
        return
    x = torch.rand(n, device="cuda")
    ref = x.double().sum()
    rel1 = lambda v: abs(v.double().item() - ref.item()) / abs(ref.item())  # noqa: E731
    measure("torch", "sum", "f32", [n], 4 * n, lambda: torch.sum(x), lambda: rel1(torch.sum(x)))
    csum = compiled(lambda a: torch.sum(a))
    measure("torch.compile", "sum", "f32", [n], 4 * n, lambda: csum(x), lambda: rel1(csum(x)))
    if triton:
        out = torch.zeros(1, device="cuda")
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        grid = lambda meta: (min(triton.cdiv(n, meta["BLOCK"]), 4 * sms),)  # noqa: E731

        run = lambda: t_sum[grid](x, out, n, SALT=0)  # noqa: E731  (one launch per call, as ctile's)

        def check():
            out.zero_()
            run()
            return rel1(out[0])

        measure("triton", "sum", "f32", [n], 4 * n, run, check)


def copy_ceiling(n):
    a = torch.randn(n, device="cuda")
    b = torch.empty_like(a)
    measure("torch", "copy", "f32", [n], 2 * 4 * n, lambda: b.copy_(a), lambda: (b.copy_(a), rel(b, a.double()))[1])


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


def load_bounds(path):
    if not path or not os.path.exists(path):
        return
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            r = json.loads(line)
            if "err_bound" in r:
                BOUNDS[(r["kernel"], r["dtype"], tuple(r["shape"]))] = r["err_bound"]


def main():
    global OUT, FLUSH, REPS, WARMUP, DEADLINE
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--ctile-results", help="ctile_bench's records: the error bound of each row")
    ap.add_argument("--deadline", type=float, help="unix time after which the remaining groups are skipped")
    ap.add_argument("--only", choices=["elementwise", "rows", "fused", "reduction"])
    ap.add_argument("--shapes", help="RxC,...: the row kernels (bf16) at these shapes only, no f32 row "
                    "(as ctile_bench --shapes)")
    a = ap.parse_args()
    OUT = open(a.out, "a") if a.out else None
    DEADLINE = a.deadline
    load_bounds(a.ctile_results)
    if a.quick:
        REPS, WARMUP = 10, 2
    torch.manual_seed(0)
    # Specialised per shape (dynamic=False), and room for every shape of one function.
    for knob in ("cache_size_limit", "recompile_limit"):  # the name changed across torch versions
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, 64)
    FLUSH = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    print(f"peers on {torch.cuda.get_device_name()}, torch {torch.__version__}, triton "
          f"{triton.__version__ if triton else 'absent: ' + TRITON_ERROR}; per-call device time, L2 flushed "
          f"(256 MiB written) before each call, median of {REPS}", file=sys.stderr)
    emit({"impl": "peers", "kernel": "method", "timing": "per-call device time: 256 MiB written before each call "
          "(L2 flush), CUDA events around the call, median", "reps": REPS, "warmup": WARMUP,
          "torch": torch.__version__, "triton": triton.__version__ if triton else None})
    scale = 32 if a.quick else 1
    n32 = (1 << 22) if a.quick else (1 << 26)
    shapes = [(16384, 1024), (8192, 4096), (4096, 16384), (32768, 1000), (8192, 5120), (1024, 32768)]
    shapes = [(r // scale, c) for r, c in shapes]
    if a.only is None:
        triton_cold_compiles()
    copy_ceiling(1 << 28)
    if a.only is None:
        launch_overhead()
    if a.only in (None, "elementwise"):
        elementwise(n32)
    if a.shapes:
        rows([tuple(int(v) for v in s.split("x")) for s in a.shapes.split(",")], None)
    elif a.only in (None, "rows"):
        rows(shapes, (8192 // scale, 4096))
    if a.only in (None, "fused"):
        fused(shapes[:3])
    if a.only in (None, "reduction"):
        reduction(n32)
    if FAILURES:
        print(f"peers: {FAILURES} row(s) FAILED (wrong result or error)", file=sys.stderr)
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
