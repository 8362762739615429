#!/usr/bin/env bash
# A GEMM tuning sweep in one device call (issue 8): builds ctile_gemm_bench (Release, build/gemm),
# runs it at each CTILE_LOOP_PREFETCH depth in DEPTHS (default "1 2 3"; 0: the variable unset, the
# compiler's default, which differs from 1 for GEMV: the option also pipelines its stream of W)
# for each shape in SHAPES (MxNxK for matmul rows, NxK for GEMV rows)
# (default "4096x4096x4096 8192x8192x8192") and each CTILE_TMA value in TMAS (default "0", the
# compiler's choice; 1: TMA copies, -1: cp.async), with a fresh kernel cache per run (the first-launch
# time is the cold JIT), and prints one line per row (depth, dtype, shape, config, TFLOP/s, check,
# error, first launch ms), then the SASS summary of the 128 x 128 x 32 bf16 kernel. No peers: the
# comparison with cuBLAS and Triton is bench/gemm/run.sh. Writes sweep_t<T>_d<D>.jsonl and logs to $OUT.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build_gemm_bench "$out/build.log" || exit 1
export CTILE_CACHE_DIR=$build/kc
status=0
for t in ${TMAS:-0}; do
  export CTILE_TMA=$t
  for d in ${DEPTHS:-1 2 3}; do
    for s in ${SHAPES:-4096x4096x4096 8192x8192x8192}; do
      rm -rf "$CTILE_CACHE_DIR"
      if [[ $d == 0 ]]; then unset CTILE_LOOP_PREFETCH; else export CTILE_LOOP_PREFETCH=$d; fi
      timeout 240 $build/bench/ctile_gemm_bench --only "$s" --reps 20 --out "$out/sweep_t${t}_d$d.jsonl" >>"$out/sweep.log" 2>&1 ||
        { echo "tma=$t d=$d $s FAILED"; status=1; }
    done
  done
done
python3 - "$out" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + '/sweep_t*_d*.jsonl')):
    t, d = f.split('sweep_t')[-1].split('.')[0].split('_d')
    for l in open(f):
        r = json.loads(l)
        print('tma=%s d=%s %s %s %s %s %s ok=%s err=%s first_ms=%s' % (t, d, r['kernel'], r['dtype'], 'x'.join(map(str, r['shape'])),
              r['config'], r.get('tflops', r.get('tbps')), r.get('ok'), r.get('rel_err'), r.get('first_launch_ms')))
PY
$build/bench/ctile_gemm_bench --cubin $build/mm.cubin &&
  { cuobjdump --dump-sass $build/mm.cubin | grep -oE '(HMMA|LDSM|LDGSTS|BAR|DEPBAR)[.A-Z0-9]*' | sort | uniq -c
    cuobjdump --dump-resource-usage $build/mm.cubin | grep -o 'REG:[0-9]*.*'; }
exit $status
