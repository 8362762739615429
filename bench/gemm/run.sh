#!/usr/bin/env bash
# The GEMM benchmark in one call, for a GPU machine: builds ctile_gemm_bench (Release, build/gemm),
# runs it and the peers (torch/cuBLAS, Triton), writes under $OUT (default bench/gemm/results):
#   gemm_ctile.jsonl  gemm_peers.jsonl  gemm_report.md  gemm_tflops.png  gemm_sass.txt  *.log
# The SASS summary records that the sm_90a kernels run on the tensor cores (HGMMA count for bf16,
# QGMMA for the FP8 product).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build_gemm_bench "$out/gemm_build.log" || exit 1
export CTILE_CACHE_DIR="$build/kernel-cache"
rm -rf "$CTILE_CACHE_DIR"
rm -f "$out/gemm_ctile.jsonl" "$out/gemm_peers.jsonl"
status=0
"$build/bench/ctile_gemm_bench" --out "$out/gemm_ctile.jsonl" "$@" >"$out/gemm_ctile.log" 2>&1 || status=1
tail -3 "$out/gemm_ctile.log"
# The SASS of the sm_90a kernel (128 x 128 x 32, bf16): its tensor-core instructions.
"$build/bench/ctile_gemm_bench" --cubin "$build/matmul_sm90a.cubin" &&
  { cuobjdump --dump-sass "$build/matmul_sm90a.cubin" | grep -oE '(HMMA|HGMMA|LDSM|LDGSTS|DEPBAR|WARPGROUP)[.A-Za-z0-9]*' | sort | uniq -c
    cuobjdump --dump-resource-usage "$build/matmul_sm90a.cubin" | grep -o 'REG:[0-9]*.*'; } >"$out/gemm_sass.txt" 2>&1
"$build/bench/ctile_gemm_bench" --cubin-fp8 "$build/matmul_fp8_sm90a.cubin" &&
  { echo "fp8 (matmul_fp8<e4m3, 128>, 128 x 128):"
    cuobjdump --dump-sass "$build/matmul_fp8_sm90a.cubin" | grep -oE '(HGMMA|QGMMA|HMMA|WARPGROUP|UTMALDG)[.A-Za-z0-9]*' | sort | uniq -c; } >>"$out/gemm_sass.txt" 2>&1
cat "$out/gemm_sass.txt"
timeout 900 python3 bench/gemm/peers.py --out "$out/gemm_peers.jsonl" >"$out/gemm_peers.log" 2>&1 || status=1
tail -3 "$out/gemm_peers.log"
python3 bench/gemm/report.py --out "$out" "$out/gemm_ctile.jsonl" "$out/gemm_peers.jsonl" || status=1
exit $status
