#!/usr/bin/env python3
"""The peers of bench/attention/attention_bench.cpp, timed the same way (CUDA events around one
call, median of the calls after a warm-up): torch's scaled_dot_product_attention with the cuDNN
backend and with the flash (FlashAttention-2) backend, and a Triton flash-attention kernel (the
flash-attention-2 algorithm: one program per block of query rows, a loop over key blocks with an
online softmax; causal in two phases, unmasked blocks then the diagonal; autotuned). Each result
is checked against torch's math backend in float32 on a few heads.

    peers.py [--out FILE] [--reps N]
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F

try:
    from torch.nn.attention import SDPBackend, sdpa_kernel
except Exception:  # noqa: BLE001
    SDPBackend = sdpa_kernel = None

try:
    import triton
    import triton.language as tl
except Exception:  # noqa: BLE001
    triton = None

OUT = None
REPS = 30
# (name, batch, heads, kv_heads, seq, head_dim): the rows of attention_bench.cpp.
SHAPES = [("s4096_d128", 8, 32, 32, 4096, 128), ("s16384_d128", 2, 32, 32, 16384, 128), ("s4096_d64", 8, 32, 32, 4096, 64),
          ("s4096_d128_gqa", 8, 32, 8, 4096, 128)]


def emit(rec):
    print(json.dumps(rec), flush=True)
    if OUT:
        OUT.write(json.dumps(rec) + "\n")
        OUT.flush()


def device_time(fn, reps):
    for _ in range(3):
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


if triton is not None:
    def configs():
        return [triton.Config({"BM": bm, "BN": bn}, num_stages=st, num_warps=w)
                for bm, bn, st, w in [(128, 64, 3, 8), (128, 128, 2, 8), (128, 64, 2, 4), (64, 64, 3, 4)]]

    @triton.jit
    def _blocks(acc, l_i, m_i, q, k_base, v_base, offs_m, offs_n, offs_d, lo, hi, qk_scale, S, D: tl.constexpr,
                BN: tl.constexpr, MASK: tl.constexpr):
        for start in range(lo, hi, BN):
            cols = start + offs_n
            kt = tl.load(k_base + cols[None, :] * D + offs_d[:, None], mask=cols[None, :] < S, other=0.0)
            s = tl.dot(q, kt) * qk_scale
            keep = cols[None, :] < S
            if MASK:
                keep = keep & (cols[None, :] <= offs_m[:, None])
            s = tl.where(keep, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.math.exp2(s - m_new[:, None])
            alpha = tl.math.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(v_base + cols[:, None] * D + offs_d[None, :], mask=cols[:, None] < S, other=0.0)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
            m_i = m_new
        return acc, l_i, m_i

    @triton.autotune(configs=configs(), key=["S", "D", "CAUSAL"])
    @triton.jit
    def t_attention(Q, K, V, O, qk_scale, H, HKV, S, D: tl.constexpr, CAUSAL: tl.constexpr, BM: tl.constexpr,
                    BN: tl.constexpr):
        pid_m = tl.program_id(0)
        bh = tl.program_id(1)
        b = bh // H
        h = bh % H
        hk = h // (H // HKV)
        q_base = Q + (b * H + h).to(tl.int64) * S * D
        k_base = K + (b * HKV + hk).to(tl.int64) * S * D
        v_base = V + (b * HKV + hk).to(tl.int64) * S * D
        offs_m = pid_m * BM + tl.arange(0, BM)
        offs_n = tl.arange(0, BN)
        offs_d = tl.arange(0, D)
        q = tl.load(q_base + offs_m[:, None] * D + offs_d[None, :], mask=offs_m[:, None] < S, other=0.0)
        m_i = tl.full([BM], float("-inf"), dtype=tl.float32)
        l_i = tl.zeros([BM], dtype=tl.float32)
        acc = tl.zeros([BM, D], dtype=tl.float32)
        if CAUSAL:
            # the blocks below the diagonal unmasked, then the diagonal's blocks with the mask
            acc, l_i, m_i = _blocks(acc, l_i, m_i, q, k_base, v_base, offs_m, offs_n, offs_d, 0, pid_m * BM, qk_scale, S,
                                    D, BN, False)
            acc, l_i, m_i = _blocks(acc, l_i, m_i, q, k_base, v_base, offs_m, offs_n, offs_d, pid_m * BM,
                                    tl.minimum((pid_m + 1) * BM, S), qk_scale, S, D, BN, True)
        else:
            acc, l_i, m_i = _blocks(acc, l_i, m_i, q, k_base, v_base, offs_m, offs_n, offs_d, 0, S, qk_scale, S, D, BN,
                                    False)
        acc = acc / l_i[:, None]
        tl.store(O + (b * H + h).to(tl.int64) * S * D + offs_m[:, None] * D + offs_d[None, :],
                 acc.to(O.dtype.element_ty), mask=offs_m[:, None] < S)

    def triton_attention(q, k, v, o, causal):
        b, h, s, d = q.shape
        grid = lambda meta: (triton.cdiv(s, meta["BM"]), b * h)  # noqa: E731
        t_attention[grid](q, k, v, o, (d ** -0.5) * 1.4426950408889634, h, k.shape[1], s, D=d, CAUSAL=causal)


def reference(q, k, v, causal, heads=2):
    """float32 math-backend attention on the first `heads` query heads of batch 0."""
    group = q.shape[1] // k.shape[1]
    qs = q[:1, :heads].float()
    ks = k[:1].float().repeat_interleave(group, dim=1)[:, :heads]
    vs = v[:1].float().repeat_interleave(group, dim=1)[:, :heads]
    return F.scaled_dot_product_attention(qs, ks, vs, is_causal=causal)


def main():
    global OUT, REPS
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--decode-only", action="store_true")
    ap.add_argument("--prefill-only", action="store_true")
    args = ap.parse_args()
    REPS = args.reps
    OUT = open(args.out, "a") if args.out else None
    dev = torch.cuda.get_device_name()
    for causal in (() if args.decode_only else (False, True)):
        for name, b, h, hkv, s, d in SHAPES:
            name = name + ("_causal" if causal else "")
            g = torch.Generator(device="cuda").manual_seed(1)
            q = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16, generator=g)
            k = torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16, generator=g)
            v = torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16, generator=g)
            o = torch.empty_like(q)
            ref = reference(q, k, v, causal)
            flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
            impls = []
            if sdpa_kernel is not None:
                for impl, be in (("torch_cudnn", SDPBackend.CUDNN_ATTENTION), ("torch_flash", SDPBackend.FLASH_ATTENTION)):
                    def fn(be=be):
                        with sdpa_kernel(be):
                            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hkv != h)
                    impls.append((impl, fn))
            if triton is not None:
                impls.append(("triton", lambda: triton_attention(q, k, v, o, causal) or o))
            for impl, fn in impls:
                rec = {"impl": impl, "kernel": "attention_prefill", "name": name, "dtype": "bf16", "batch": b, "heads": h,
                       "kv_heads": hkv, "seq": s, "head_dim": d, "causal": causal, "device": dev}
                try:
                    out = fn()
                    torch.cuda.synchronize()
                    got = out[:1, :ref.shape[1]].float()
                    err = ((got - ref).abs().amax(-1) / ref.abs().amax(-1).clamp_min(1e-30)).max().item()
                    ms = device_time(fn, REPS)
                    rec.update(ms=ms, tflops=flops / (ms * 1e-3) / 1e12, rel_err=err, ok=err <= 2.0 ** -6)
                    if impl == "triton":
                        rec["config"] = str(t_attention.best_config)
                except Exception as e:  # noqa: BLE001
                    rec.update(ok=False, error=str(e)[:300])
                emit(rec)

    # Decode: one query token per sequence, 32 query heads on 8 KV heads, head dim 128, every
    # sequence at the full context (as ctile_attention_bench's decode rows); torch SDPA (its
    # default backend choice) on [B, H, 1, D] queries.
    for b in (() if args.prefill_only else (1, 16)):
        for ctx in (4096, 16384, 65536):
            h, hkv, d = 32, 8, 128
            g = torch.Generator(device="cuda").manual_seed(2)
            q = torch.randn(b, h, 1, d, device="cuda", dtype=torch.bfloat16, generator=g)
            k = torch.randn(b, hkv, ctx, d, device="cuda", dtype=torch.bfloat16, generator=g)
            v = torch.randn(b, hkv, ctx, d, device="cuda", dtype=torch.bfloat16, generator=g)
            ref = reference(q, k, v, False)
            nbytes = 2.0 * b * hkv * ctx * d * 2
            rec = {"impl": "torch_sdpa", "kernel": "attention_decode", "name": f"decode_b{b}_ctx{ctx}", "dtype": "bf16",
                   "batch": b, "heads": h, "kv_heads": hkv, "ctx": ctx, "head_dim": d, "device": dev}
            try:
                fn = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)  # noqa: E731
                out = fn()
                torch.cuda.synchronize()
                got = out[:1, :ref.shape[1]].float()
                err = ((got - ref).abs().amax(-1) / ref.abs().amax(-1).clamp_min(1e-30)).max().item()
                ms = device_time(fn, REPS)
                rec.update(ms=ms, tbps=nbytes / (ms * 1e-3) / 1e12, rel_err=err, ok=err <= 2.0 ** -6)
            except Exception as e:  # noqa: BLE001
                rec.update(ok=False, error=str(e)[:300])
            emit(rec)
            del q, k, v


if __name__ == "__main__":
    main()
