#!/usr/bin/env python3
"""The peers of bench/gemm/gemm_bench.cpp, timed the same way (CUDA events around one call, median
of the calls after a warm-up, no L2 flush): torch.matmul (cuBLAS) and a Triton matmul (the
tutorial's algorithm: grouped tile order, a K loop of tl.dot, autotuned over a few
configurations), plus Triton's cold compile of one configuration; torch.addmm + F.silu for the
fused epilogue rows; cuBLAS's gemv for the decode rows. The decode-shape rows (M <= 128, and the
gemv) are timed as gemm_bench.cpp times them: graph replays of back-to-back calls on rotating
weights (graph_time, "timing": "replay"). Each result is checked against a float64 product on 512
sampled elements (the gemv rows on every element).

    peers.py [--out FILE] [--reps N]
"""
import argparse
import json
import math
import random
import statistics
import time

import torch

try:
    import triton
    import triton.language as tl
except Exception:  # noqa: BLE001
    triton = None

OUT = None
REPS = 50
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (2048, 2048, 2048), (4000, 4000, 4000), (8192, 8192, 512),
          (512, 8192, 8192)]
DT = {"bf16": torch.bfloat16, "f16": torch.float16}
# Qwen3-4B and 8B projections (W [N, K]): q/k/v fused, o, gate/up fused, down (gemm_bench.cpp's kGemvShapes).
GEMV_SHAPES = [(6144, 2560), (2560, 4096), (19456, 2560), (2560, 9728), (6144, 4096), (4096, 4096), (24576, 4096),
               (4096, 12288)]


def emit(rec):
    print(json.dumps(rec), flush=True)
    if OUT:
        OUT.write(json.dumps(rec) + "\n")
        OUT.flush()


def device_time(fn, reps):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    return statistics.median(ts)


# gemm_bench.cpp's replayed rows (decode shapes): REPLAY_CALLS back-to-back calls captured into one
# CUDA graph, call i on weight set i % len(fns), enough sets to span ROTATION_BYTES (out of L2);
# each replay timed with events around it, divided by the calls; the median over `reps` replays.
REPLAY_CALLS = 20
ROTATION_BYTES = 128e6


def rotation_sets(nbytes):
    return int(min(8, max(1, math.ceil(ROTATION_BYTES / nbytes))))


def graph_time(fns, reps):
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for fn in fns:  # warm-up (and Triton's autotuning) outside the capture
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(REPLAY_CALLS):
            fns[i % len(fns)]()
    for _ in range(2):
        graph.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        graph.replay()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) / REPLAY_CALLS)
    return statistics.median(ts)


def check(c, a, b):
    rng = random.Random(7)
    m, n = c.shape
    ii = torch.tensor([rng.randrange(m) for _ in range(512)], device=c.device)
    jj = torch.tensor([rng.randrange(n) for _ in range(512)], device=c.device)
    ref = (a[ii].double() * b[:, jj].t().double()).sum(1)
    got = c[ii, jj].double()
    return math.sqrt(((got - ref) ** 2).sum().item() / max((ref ** 2).sum().item(), 1e-300))


if triton is not None:
    def configs():
        out = []
        for bm, bn, bk, st, w in [(128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 128, 64, 4, 4), (128, 128, 32, 4, 4),
                                  (128, 64, 64, 4, 4), (64, 128, 64, 4, 4)]:
            out.append(triton.Config({"BM": bm, "BN": bn, "BK": bk, "GROUP": 8}, num_stages=st, num_warps=w))
        return out

    @triton.autotune(configs=configs(), key=["M", "N", "K"])
    @triton.jit
    def t_matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                 GROUP: tl.constexpr):
        pid = tl.program_id(0)
        tiles_m = tl.cdiv(M, BM)
        tiles_n = tl.cdiv(N, BN)
        per_group = GROUP * tiles_n
        group = pid // per_group
        first_m = group * GROUP
        rows_in_group = min(tiles_m - first_m, GROUP)
        pm = first_m + (pid % per_group) % rows_in_group
        pn = (pid % per_group) // rows_in_group
        offs_m = (pm * BM + tl.arange(0, BM)) % M
        offs_n = (pn * BN + tl.arange(0, BN)) % N
        offs_k = tl.arange(0, BK)
        pa = a + offs_m[:, None] * sam + offs_k[None, :] * sak
        pb = b + offs_k[:, None] * sbk + offs_n[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for kk in range(0, tl.cdiv(K, BK)):
            ka = tl.load(pa, mask=offs_k[None, :] < K - kk * BK, other=0.0)
            kb = tl.load(pb, mask=offs_k[:, None] < K - kk * BK, other=0.0)
            acc = tl.dot(ka, kb, acc)
            pa += BK * sak
            pb += BK * sbk
        cm = pm * BM + tl.arange(0, BM)
        cn = pn * BN + tl.arange(0, BN)
        tl.store(c + cm[:, None] * scm + cn[None, :] * scn, acc.to(c.dtype.element_ty),
                 mask=(cm[:, None] < M) & (cn[None, :] < N))

    def triton_mm(a, b, c):
        m, k = a.shape
        n = b.shape[1]
        grid = lambda meta: (triton.cdiv(m, meta["BM"]) * triton.cdiv(n, meta["BN"]),)  # noqa: E731
        t_matmul[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))


def main():
    global OUT, REPS
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--kernels", default="matmul,matmul_bias_silu,fp8,gemv,skinny,cold",
                    help="comma-separated groups to run: matmul, matmul_bias_silu, fp8 (torch._scaled_mm), gemv, "
                         "skinny (M = 16 and 128 projections), cold (Triton's compile)")
    ap.add_argument("--only", default="",
                    help="comma-separated shapes MxNxK (gemv: NxK) to run alone, as gemm_bench.cpp's --only")
    ap.add_argument("--impls", default="torch,triton", help="comma-separated peers of the matmul rows: torch, triton")
    args = ap.parse_args()
    groups = set(args.kernels.split(","))
    only = set(filter(None, args.only.split(",")))
    impl_set = set(args.impls.split(","))
    REPS = args.reps
    OUT = open(args.out, "a") if args.out else None
    dev = torch.cuda.get_device_name()
    rows = [(s, "bf16") for s in SHAPES] + [((4096, 4096, 4096), "f16")] if "matmul" in groups else []
    # The decode projections at M = 16 and 128 (gemm_bench.cpp's skinny rows): the same matmul,
    # timed as gemm_bench.cpp times them (graph replays of back-to-back calls on rotating weights).
    if "skinny" in groups:
        rows += [((m, n, k), "bf16") for m in (16, 128) for n, k in GEMV_SHAPES]
    rows = [r for r in rows if not only or "x".join(map(str, r[0])) in only]
    for (m, n, k), dn in rows:
        dt = DT[dn]
        g = torch.Generator(device="cuda").manual_seed(1)
        a = torch.randn(m, k, device="cuda", dtype=dt, generator=g)
        b = torch.randn(k, n, device="cuda", dtype=dt, generator=g)
        replay = m <= 128
        bs = [b] + [torch.randn(k, n, device="cuda", dtype=dt, generator=g)
                    for _ in range(rotation_sets(b.numel() * b.element_size()) - 1)] if replay else [b]
        flops = 2.0 * m * n * k
        c = torch.empty(m, n, device="cuda", dtype=dt)
        impls = [("torch", lambda bi=b: torch.matmul(a, bi, out=c))] if "torch" in impl_set else []
        if triton is not None and "triton" in impl_set:
            impls.append(("triton", lambda bi=b: triton_mm(a, bi, c)))
        for impl, fn in impls:
            rec = {"impl": impl, "kernel": "matmul", "dtype": dn, "shape": [m, n, k], "device": dev,
                   "timing": "replay" if replay else "call"}
            try:
                fn()
                torch.cuda.synchronize()
                err = check(c, a, b)
                if replay:
                    mk = (lambda bi: (lambda: torch.matmul(a, bi, out=c))) if impl == "torch" else \
                         (lambda bi: (lambda: triton_mm(a, bi, c)))
                    ms = graph_time([mk(bi) for bi in bs], REPS)
                else:
                    ms = device_time(fn, REPS)
                rec.update(ms=ms, tflops=flops / (ms * 1e-3) / 1e12, rel_err=err, ok=err < 0.5 * 2.0 ** -7 + 1e-4)
                if impl == "triton":
                    rec["config"] = str(t_matmul.best_config)
            except Exception as e:  # noqa: BLE001
                rec.update(ok=False, error=str(e)[:300])
            emit(rec)
    # The fused epilogue's peer: cuBLAS with the bias (torch.addmm, bias in cuBLASLt's epilogue),
    # followed by a separate SiLU (torch.nn.functional.silu in place), as gemm_bench.cpp's
    # matmul_bias_silu rows compute C = silu(A @ B + bias).
    for m, n, k in [(4096, 4096, 4096), (8192, 8192, 8192)] if "matmul_bias_silu" in groups else []:
        g = torch.Generator(device="cuda").manual_seed(3)
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16, generator=g)
        bias = torch.randn(n, device="cuda", dtype=torch.bfloat16, generator=g)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)

        def addmm_silu():
            torch.addmm(bias, a, b, out=c)
            torch.nn.functional.silu(c, inplace=True)

        rec = {"impl": "torch", "kernel": "matmul_bias_silu", "dtype": "bf16", "shape": [m, n, k], "device": dev,
               "what": "torch.addmm (cuBLAS, bias in its epilogue) + a separate F.silu"}
        try:
            addmm_silu()
            torch.cuda.synchronize()
            rng = random.Random(7)
            ii = torch.tensor([rng.randrange(m) for _ in range(512)], device="cuda")
            jj = torch.tensor([rng.randrange(n) for _ in range(512)], device="cuda")
            h = (a[ii].double() * b[:, jj].t().double()).sum(1) + bias[jj].double()
            ref = h * torch.sigmoid(h)
            err = ((c[ii, jj].double() - ref).norm() / ref.norm().clamp_min(1e-300)).item()
            ms = device_time(addmm_silu, REPS)
            rec.update(ms=ms, tflops=2.0 * m * n * k / (ms * 1e-3) / 1e12, rel_err=err, ok=err < 0.5 * 2.0 ** -7 + 1e-4)
        except Exception as e:  # noqa: BLE001
            rec.update(ok=False, error=str(e)[:300])
        emit(rec)
    # FP8 with per-tensor scales (gemm_bench.cpp's matmul_fp8 rows): torch._scaled_mm of A [M, K]
    # and Bt [N, K] in e4m3 (B passed column-major, as it requires), C in bf16 = (A @ B) * 0.5.
    for m, n, k in [(8192, 8192, 8192)] if "fp8" in groups and hasattr(torch, "float8_e4m3fn") else []:
        g = torch.Generator(device="cuda").manual_seed(4)
        a = torch.randn(m, k, device="cuda", generator=g).to(torch.float8_e4m3fn)
        bt = torch.randn(n, k, device="cuda", generator=g).to(torch.float8_e4m3fn)
        one = torch.tensor(1.0, device="cuda")
        half = torch.tensor(0.5, device="cuda")
        rec = {"impl": "torch", "kernel": "matmul_fp8", "dtype": "e4m3", "shape": [m, n, k], "device": dev,
               "what": "torch._scaled_mm (e4m3, per-tensor scales, bf16 out)"}
        try:
            def scaled_mm():
                return torch._scaled_mm(a, bt.t(), scale_a=one, scale_b=half, out_dtype=torch.bfloat16)
            c = scaled_mm()
            torch.cuda.synchronize()
            rng = random.Random(7)
            ii = torch.tensor([rng.randrange(m) for _ in range(512)], device="cuda")
            jj = torch.tensor([rng.randrange(n) for _ in range(512)], device="cuda")
            ref = (a[ii].double() * bt[jj].double()).sum(1) * 0.5
            err = ((c[ii, jj].double() - ref).norm() / ref.norm().clamp_min(1e-300)).item()
            ms = device_time(scaled_mm, REPS)
            rec.update(ms=ms, tflops=2.0 * m * n * k / (ms * 1e-3) / 1e12, rel_err=err, ok=err < 0.5 * 2.0 ** -7 + 1e-4)
        except Exception as e:  # noqa: BLE001
            rec.update(ok=False, error=str(e)[:300])
        emit(rec)
    # The decode products (M = 1) of gemm_bench.cpp's gemv rows: cuBLAS through F.linear.

    for n, k in GEMV_SHAPES if "gemv" in groups else []:
        g = torch.Generator(device="cuda").manual_seed(2)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
        x = torch.randn(1, k, device="cuda", dtype=torch.bfloat16, generator=g)
        y = torch.empty(1, n, device="cuda", dtype=torch.bfloat16)
        ws = [w] + [torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
                    for _ in range(rotation_sets(w.numel() * w.element_size()) - 1)]
        rec = {"impl": "torch", "kernel": "gemv", "dtype": "bf16", "shape": [n, k], "device": dev, "timing": "replay"}
        try:
            fn2 = lambda: torch.matmul(x, w.t(), out=y)  # noqa: E731: cuBLAS's gemv path
            fn2()
            torch.cuda.synchronize()
            ref = (w.double() @ x[0].double())
            err = ((y[0].double() - ref).norm() / ref.norm().clamp_min(1e-300)).item()
            ms = graph_time([(lambda wi: (lambda: torch.matmul(x, wi.t(), out=y)))(wi) for wi in ws], REPS)
            nbytes = 2.0 * (n * k + k + n)
            rec.update(ms=ms, tbps=nbytes / (ms * 1e-3) / 1e12, mbytes=nbytes / 1e6, rel_err=err,
                       ok=err < 0.5 * 2.0 ** -7 + 1e-4)
        except Exception as e:  # noqa: BLE001
            rec.update(ok=False, error=str(e)[:300])
        emit(rec)
    if triton is not None and "cold" in groups:
        # Cold compile of one configuration of the same kernel (a fresh constexpr value misses the cache).
        m = n = k = 1024
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        kern = t_matmul.fn
        salt_group = random.randrange(9, 64)
        t0 = time.perf_counter()
        kern[(triton.cdiv(m, 128) * triton.cdiv(n, 128),)](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0),
                                                            b.stride(1), c.stride(0), c.stride(1), BM=128, BN=128,
                                                            BK=64, GROUP=salt_group, num_stages=4, num_warps=4)
        torch.cuda.synchronize()
        emit({"impl": "triton", "kernel": "matmul_cold_compile", "ms": (time.perf_counter() - t0) * 1e3, "ok": True})


if __name__ == "__main__":
    main()
