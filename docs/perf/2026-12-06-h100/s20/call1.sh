#!/usr/bin/env bash
# Session 20, device call 1: the GPU suites (no sanitizer), racecheck over the new sm_90 cases,
# the GEMM rows at 8192^3 (bf16 configurations, fused epilogue, unchecked, FP8) and their peers.
set -u
O=${OUT:-results}; mkdir -p "$O"
SANITIZE=0 OUT=$O/suites timeout 330 scripts/gpu_run.sh >"$O/gpu_run.log" 2>&1; echo "gpu_run rc $?"
B=build/gpu
cs=$(find $B -name test_cuda_codegen_gpu -type f | head -1)
timeout 110 compute-sanitizer --tool racecheck "$cs" \
  --gtest_filter='*overlap_sm90*:*fp8_e4m3_128_tma_ws*:*attention_unchecked*' >"$O/racecheck.txt" 2>&1
echo "racecheck rc $?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" "$O/racecheck.txt" | head
export CTILE_CACHE_DIR=$B/kc; rm -rf "$CTILE_CACHE_DIR"
timeout 150 $B/bench/ctile_gemm_bench --only 8192x8192x8192 --reps 20 --out "$O/gemm8192.jsonl" >"$O/gemm8192.log" 2>&1
echo "bench rc $?"; tail -3 "$O/gemm8192.log"
timeout 140 python3 bench/gemm/peers.py --reps 30 --kernels matmul,matmul_bias_silu,fp8 --out "$O/peers.jsonl" >"$O/peers.log" 2>&1
echo "peers rc $?"
python3 - "$O" <<'PY'
import json,sys
o=sys.argv[1]
for f in ("gemm8192.jsonl","peers.jsonl"):
    try:
        for l in open(f"{o}/{f}"):
            r=json.loads(l); print(f, r.get("impl"), r.get("kernel"), r.get("dtype"), r.get("shape"), r.get("config"), round(r.get("tflops",0) or 0,1), r.get("ok"), r.get("error","")[:80])
    except FileNotFoundError: print("missing", f)
PY
