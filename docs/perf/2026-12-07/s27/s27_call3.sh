#!/usr/bin/env bash
# NOT RUN: the device pool refused the starts until this session had no device time left. It is
# the first call to make next session (the fixes of 29058c6 have not run on a GPU yet).
# Session 27, call 3 (at the commit named below: graph runs record their event at once, split-K
# 128 x 128 tiles in K steps of 64): tests/gpu and the examples with compute-sanitizer memcheck
# (leaks, stream-ordered races) and racecheck. GPU_ONLY=1: cuda_codegen_gpu passed 429/429 in call
# 2 and nothing it covers changed since. (The launch A/B of sessions 26 and 27 did not fit the
# device time left after the pool's refusals.)
t0=$SECONDS
GPU_ONLY=1 SANITIZE=1 CTILE_COMMIT=${CTILE_COMMIT:-unknown} scripts/gpu_run.sh > "$OUT/gpu_run.log" 2>&1
tail -22 "$OUT/gpu_run.log"
cp build/gpu/tests/gpu_summary.txt "$OUT/" 2>/dev/null || true
echo "done at $((SECONDS-t0))s"
