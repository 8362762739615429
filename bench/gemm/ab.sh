#!/usr/bin/env bash
# A/B of compile options on the GEMM in one device call (issue 8): builds ctile_gemm_bench (Release,
# build/gemm) and runs one tile configuration (CONFIG, default 128x256x64) at each shape of SHAPES
# (default: the six bf16 shapes of the benchmark) under each variant of VARIANTS, a space-separated
# list of comma-separated CTILE_* assignments ("-": none, the compiler's defaults), e.g.
#   VARIANTS="- CTILE_WARP_SPECIALIZE=1 CTILE_TMA=1,CTILE_WARP_SPECIALIZE=1" bench/gemm/ab.sh
# The variants run in turn for each shape (ROUNDS times, default 2, so drift falls on all of them),
# each in a fresh kernel cache, and the best median of its rounds counts. With PEERS=1 the peers
# (bench/gemm/peers.py: cuBLAS, Triton; PEER_KERNELS, default "matmul,matmul_bias_silu", the groups
# it runs) run after, for ratios in the same call (a fused-epilogue row against torch.addmm + F.silu). Writes ab.jsonl
# (one record per row, with its variant), ab_peers.jsonl and logs to $OUT, and prints a table:
# TFLOP/s per shape and variant, the ratio to the first variant and to cuBLAS.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build_gemm_bench "$out/ab_build.log" || exit 1
config=${CONFIG:-128x256x64}
shapes=${SHAPES:-4096x4096x4096 8192x8192x8192 2048x2048x2048 4000x4000x4000 8192x8192x512 512x8192x8192}
variants=${VARIANTS:--}
rm -f "$out/ab.jsonl" "$out/ab_peers.jsonl"
status=0
for s in $shapes; do
  for round in $(seq "${ROUNDS:-2}"); do
    for v in $variants; do
      export CTILE_CACHE_DIR=$build/kc-ab
      rm -rf "$CTILE_CACHE_DIR"
      # Each variant in a subshell of its own: its assignments end with it.
      (
        if [[ $v != - ]]; then for a in ${v//,/ }; do export "$a"; done; fi
        timeout 240 $build/bench/ctile_gemm_bench --only "$s" --config "$config" --reps 30 --out "$out/ab_row.jsonl" >>"$out/ab.log" 2>&1
      ) || { echo "$v $s FAILED"; status=1; }
      if [[ -f $out/ab_row.jsonl ]]; then
        python3 -c 'import json,sys; [print(json.dumps(dict(json.loads(l), variant=sys.argv[1], round=int(sys.argv[2])))) for l in open(sys.argv[3])]' \
          "$v" "$round" "$out/ab_row.jsonl" >>"$out/ab.jsonl"
        rm -f "$out/ab_row.jsonl"
      fi
    done
  done
done
if [[ ${PEERS:-0} == 1 ]]; then
  timeout 400 python3 bench/gemm/peers.py --out "$out/ab_peers.jsonl" --kernels "${PEER_KERNELS:-matmul,matmul_bias_silu}" \
    >"$out/ab_peers.log" 2>&1 || status=1
fi
python3 - "$out" "$variants" <<'PY'
import json, os, sys
out, variants = sys.argv[1], sys.argv[2].split()
best, errs = {}, {}
for l in open(os.path.join(out, 'ab.jsonl')):
    r = json.loads(l)
    key = ('x'.join(map(str, r['shape'])) + ('' if r['kernel'] == 'matmul' else ' ' + r['kernel']), r['variant'])
    if not r.get('ok'):
        errs[key] = r.get('error', 'rel_err %s' % r.get('rel_err'))
        continue
    best[key] = max(best.get(key, 0), r['tflops'])
peers = {}
p = os.path.join(out, 'ab_peers.jsonl')
if os.path.exists(p):
    for l in open(p):
        r = json.loads(l)
        if r.get('ok') and r.get('kernel') in ('matmul', 'matmul_bias_silu') and r['dtype'] == 'bf16':
            key = 'x'.join(map(str, r['shape'])) + ('' if r['kernel'] == 'matmul' else ' ' + r['kernel'])
            peers[(key, r['impl'])] = r['tflops']
print('| shape | ' + ' | '.join(variants) + ' | cuBLAS | Triton |')
print('|---' * (len(variants) + 3) + '|')
for s in dict.fromkeys(k[0] for k in list(best) + list(errs)):
    base = best.get((s, variants[0]))
    cells = []
    for v in variants:
        t = best.get((s, v))
        if t is None:
            cells.append('FAILED: %s' % errs.get((s, v), 'no record')[:60])
            continue
        c = '%.1f' % t
        if base and v != variants[0]:
            c += ' (%.3fx)' % (t / base)
        if peers.get((s, 'torch')):
            c += ' [%.3f cuBLAS]' % (t / peers[(s, 'torch')])
        cells.append(c)
    print('| %s | %s | %s | %s |' % (s, ' | '.join(cells), '%.1f' % peers[(s, 'torch')] if (s, 'torch') in peers else '-',
                                     '%.1f' % peers[(s, 'triton')] if (s, 'triton') in peers else '-'))
PY
exit $status
