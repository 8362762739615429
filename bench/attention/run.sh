#!/usr/bin/env bash
# The attention benchmark in one call, for a GPU machine: builds ctile_attention_bench (Release,
# build/gemm: the GEMM benchmark's build folder), runs it and the peers (torch SDPA cuDNN / flash,
# Triton), writes under $OUT (default bench/attention/results):
#   attention_ctile.jsonl  attention_peers.jsonl  attention_report.md  attention_tflops.png  *.log
# and the SASS instruction counts of the kernel (attention_sass.txt: HGMMA when on wgmma).
# VARIANTS (optional): a space-separated list of comma-separated CTILE_* assignments, e.g.
#   VARIANTS="CTILE_TMA=1 CTILE_TMA=1,CTILE_WARP_SPECIALIZE=1" bench/attention/run.sh --only prefill
# runs ctile's side once more per variant (attention_ctile_v<i>.jsonl, each in a fresh kernel
# cache) and prints each variant's TFLOP/s beside the default's (attention_variants.txt); the
# report and the plot stay the default's.
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
i=0
for v in ${VARIANTS:-}; do
  i=$((i + 1))
  rm -rf "$CTILE_CACHE_DIR" "$out/attention_ctile_v$i.jsonl"
  (
    for a in ${v//,/ }; do export "$a"; done
    "$build/bench/ctile_attention_bench" --out "$out/attention_ctile_v$i.jsonl" "$@" >"$out/attention_ctile_v$i.log" 2>&1
  ) || { echo "variant $v FAILED (attention_ctile_v$i.log)"; status=1; }
done
if [[ -n ${VARIANTS:-} ]]; then
  python3 - "$out" ${VARIANTS} <<'PY' | tee "$out/attention_variants.txt"
import json, os, sys
out, variants = sys.argv[1], sys.argv[2:]
def rows(path):
    r = {}
    if os.path.exists(path):
        for l in open(path):
            x = json.loads(l)
            key = (x.get('kernel'), x.get('name'))
            r[key] = x
    return r
base = rows(os.path.join(out, 'attention_ctile.jsonl'))
var = [rows(os.path.join(out, 'attention_ctile_v%d.jsonl' % (i + 1))) for i in range(len(variants))]
def perf(x):
    if x is None: return None
    if not x.get('ok', True): return 'FAILED'
    return x.get('tflops', x.get('tbps'))
print('| row | default | ' + ' | '.join(variants) + ' |')
print('|---' * (len(variants) + 2) + '|')
for key, b in base.items():
    cells = []
    pb = perf(b)
    for v in var:
        pv = perf(v.get(key))
        if isinstance(pv, float) and isinstance(pb, float) and pb > 0:
            cells.append('%.1f (%.3fx)' % (pv, pv / pb))
        else:
            cells.append(str(pv))
    print('| %s | %s | %s |' % (' '.join(k for k in key if k), pb, ' | '.join(cells)))
PY
fi
"$build/bench/ctile_attention_bench" --cubin "$build/attention_sm90a.cubin" &&
  { cuobjdump --dump-sass "$build/attention_sm90a.cubin" | grep -oE '(HMMA|HGMMA|LDSM|LDGSTS|UTMALDG|SYNCS|MUFU)[.A-Za-z0-9]*' | sort | uniq -c
    cuobjdump --dump-resource-usage "$build/attention_sm90a.cubin" | grep -o 'REG:[0-9]*.*'; } >"$out/attention_sass.txt" 2>&1
cat "$out/attention_sass.txt"
peer_args=()  # the peers run the same half of the rows
for a in "$@"; do case $a in --prefill-only | --decode-only) peer_args+=("$a") ;; esac; done
timeout 900 python3 bench/attention/peers.py "${peer_args[@]}" --out "$out/attention_peers.jsonl" >"$out/attention_peers.log" 2>&1 || status=1
tail -3 "$out/attention_peers.log"
python3 bench/attention/report.py --out "$out" "$out/attention_ctile.jsonl" "$out/attention_peers.jsonl" || status=1
exit $status
