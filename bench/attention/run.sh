#!/usr/bin/env bash
# The attention benchmark in one call, for a GPU machine: builds ctile_attention_bench (Release,
# build/gemm: the GEMM benchmark's build folder), runs it and the peers (torch SDPA cuDNN / flash,
# Triton), writes under $OUT (default bench/attention/results):
#   attention_ctile.jsonl  attention_peers.jsonl  attention_report.md  attention_tflops.png  *.log
# and the SASS instruction counts of the kernel (attention_sass.txt: HGMMA when on wgmma).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../gemm/common.sh"
[ -n "${OUT:-}" ] || { out="$root/bench/attention/results"; mkdir -p "$out"; }
build_gemm_bench "$out/attention_build.log" || exit 1
cmake --build "$build" --target ctile_attention_bench -j "$(nproc)" >>"$out/attention_build.log" 2>&1 || { tail -30 "$out/attention_build.log"; exit 1; }
export CTILE_CACHE_DIR="$build/kernel-cache-attention"
rm -rf "$CTILE_CACHE_DIR"
rm -f "$out/attention_ctile.jsonl" "$out/attention_peers.jsonl"
status=0
"$build/bench/ctile_attention_bench" --out "$out/attention_ctile.jsonl" "$@" >"$out/attention_ctile.log" 2>&1 || status=1
tail -3 "$out/attention_ctile.log"
"$build/bench/ctile_attention_bench" --cubin "$build/attention_sm90a.cubin" &&
  { cuobjdump --dump-sass "$build/attention_sm90a.cubin" | grep -oE '(HMMA|HGMMA|LDSM|LDGSTS|UTMALDG|SYNCS|MUFU)[.A-Za-z0-9]*' | sort | uniq -c
    cuobjdump --dump-resource-usage "$build/attention_sm90a.cubin" | grep -o 'REG:[0-9]*.*'; } >"$out/attention_sass.txt" 2>&1
cat "$out/attention_sass.txt"
timeout 900 python3 bench/attention/peers.py --out "$out/attention_peers.jsonl" >"$out/attention_peers.log" 2>&1 || status=1
tail -3 "$out/attention_peers.log"
python3 bench/attention/report.py --out "$out" "$out/attention_ctile.jsonl" "$out/attention_peers.jsonl" || status=1
exit $status
