#!/usr/bin/env bash
# Session 26, call 1: the split-K product rebuilt (K steps of 128 for 64-row tiles, the sum over
# row pieces with the splits unrolled) at the decode shapes beside the plain natural kernel and
# cuBLAS; ncu's kernel durations of the split rows (partial against sum); then issue 9's launch
# rows with the bound kernel's argument fast path, six rounds.
t0=$SECONDS
source bench/gemm/common.sh
build_gemm_bench "$out/build.log" || exit 1
( cmake --build "$build" --target ctile_launch_overhead -j "$(nproc)" > "$out/build_launch.log" 2>&1 || tail -20 "$out/build_launch.log" ) &
echo "built at $((SECONDS-t0))s"
export CTILE_CACHE_DIR="$build/kernel-cache"
b="$build/bench/ctile_gemm_bench"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
show() {
  python3 -c "import json,sys; [print(sys.argv[1], r['shape'], r['config'], round(r['ms']*1e3,1) if r.get('ok') else r.get('error','')[:160], 'us') for r in map(json.loads, open(sys.argv[2]))]" "$1" "$2"
}
shapes=16x2560x4096,128x2560x4096,128x6144x2560,128x4096x12288
timeout 150 "$b" --rows skinny --only $shapes --config 64x64x128,64x128x128,16x64x64,16x64x128,16x128x64 --reps 10 --out "$out/skinny.jsonl" > "$out/skinny.log" 2>&1
show skinny "$out/skinny.jsonl"
echo "skinny done at $((SECONDS-t0))s"
timeout 60 python3 bench/gemm/peers.py --kernels skinny --impls torch --only $shapes --out "$out/peers.jsonl" > "$out/peers.log" 2>&1
python3 -c "import json,sys; [print('cublas', r.get('shape'), round(r['ms']*1e3,1), 'us') for r in map(json.loads, open(sys.argv[1])) if r.get('ok')]" "$out/peers.jsonl"
echo "peers done at $((SECONDS-t0))s"
wait
lo="$build/bench/ctile_launch_overhead"
for i in 1 2 3 4 5 6; do
  timeout 15 "$lo" --only enqueue,bound,sync --out "$out/launch_$i.jsonl" > "$out/launch_$i.log" 2>&1
  python3 -c "import json,sys; print(' '.join(r['impl']+':'+r['what']+'='+str(round(r['us'],2)) for r in map(json.loads, open(sys.argv[1])) if r.get('impl') in ('raw','ctile','bound')))" "$out/launch_$i.jsonl"
done
echo "launch done at $((SECONDS-t0))s"
if command -v ncu >/dev/null; then
  for sc in "16x2560x4096 16x64x64" "128x2560x4096 64x64x128"; do
    set -- $sc
    timeout 90 ncu --metrics gpu__time_duration.sum -k regex:split_k --launch-count 16 --csv "$b" --rows skinny --only $1 --config $2 --reps 1 > "$out/ncu_$1.csv" 2> "$out/ncu_$1.err"
    python3 - "$out/ncu_$1.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows: print('ncu: nothing'); sys.exit()
h = rows[0]; ki = h.index('Kernel Name'); vi = h.index('Metric Value'); gi = h.index('Grid Size') if 'Grid Size' in h else None
d = collections.defaultdict(list)
for r in rows[1:]:
    try: d[(r[ki][:60], r[gi] if gi is not None else '')].append(float(r[vi].replace(',', '')))
    except ValueError: pass
for k, v in d.items(): print('ncu', sys.argv[1].split('/')[-1], k, 'n', len(v), 'median ns', sorted(v)[len(v)//2])
PY
  done
fi
echo "ncu done at $((SECONDS-t0))s"
tar -czf "$out/records.tar.gz" -C "$out" $(cd "$out" && ls *.jsonl *.log *.csv *.err 2>/dev/null) 2>/dev/null; rm -f "$out"/*.log "$out"/*.jsonl "$out"/*.csv "$out"/*.err
echo "all done at $((SECONDS-t0))s"
