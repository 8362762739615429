#!/usr/bin/env bash
# Session 26, call 2: what the split-K partial product waits for. Call 1 (ncu) put a 16-row split's
# 8 K steps at ~13 us whatever their depth (64 or 128) and the 64-row splits at ~27 us (one CTA a
# tile block, 1 CTA an SM): the same rows with the loads issued further ahead (loop_prefetch 2, 3)
# and with a resident grid (stages 2: the producer copies the next tile block's operands during
# this one's epilogue), ncu's durations of each kernel beside.
t0=$SECONDS
source bench/gemm/common.sh
build_gemm_bench "$out/build.log" || exit 1
echo "built at $((SECONDS-t0))s"
export CTILE_CACHE_DIR="$build/kernel-cache"
b="$build/bench/ctile_gemm_bench"
rm -f "$out"/*.jsonl "$out"/*.log "$out"/*.csv "$out"/*.err "$out"/*.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
show() {
  python3 -c "import json,sys; [print(sys.argv[1], r['shape'], r['config'], round(r['ms']*1e3,1) if r.get('ok') else r.get('error','')[:160], 'us') for r in map(json.loads, open(sys.argv[2]))]" "$1" "$2"
}
durs() {  # ncu's median duration per kernel and grid
  python3 - "$1" "$2" <<'PY'
import csv, sys, collections
d = collections.defaultdict(list)
for r in csv.reader(open(sys.argv[2])):
    if len(r) == 15 and r[0] != 'ID':
        try: d[(r[4].split('matmul_split_k_')[-1][:12], r[8])].append(float(r[14].replace(',', '')))
        except ValueError: pass
print(sys.argv[1], '; '.join(f'{k[0]} grid {k[1]}: {sorted(v)[len(v)//2]/1e3:.1f} us' for k, v in d.items()))
PY
}
m16=16x2560x4096
m128=128x2560x4096,128x6144x2560,128x4096x12288
# name | env | shapes | configs
while IFS='|' read -r name envs shapes cfgs; do
  [[ -z "$name" ]] && continue
  timeout 100 env $envs "$b" --rows skinny --only $shapes --config $cfgs --reps 10 --out "$out/$name.jsonl" > "$out/$name.log" 2>&1
  show "$name" "$out/$name.jsonl"
done <<'ROWS'
m16_def|CTILE_X=0|16x2560x4096|16x64x64,16x64x128,16x128x64,64x64x128
m16_lp2|CTILE_LOOP_PREFETCH=2|16x2560x4096|16x64x64,16x64x128,16x128x64
m16_lp3|CTILE_LOOP_PREFETCH=3|16x2560x4096|16x64x64,16x64x128
m16_st2|CTILE_STAGES=2|16x2560x4096|16x64x64,16x64x128,64x64x128
m128_st2|CTILE_STAGES=2|128x2560x4096,128x6144x2560,128x4096x12288|64x64x128,64x128x128
ROWS
echo "rows done at $((SECONDS-t0))s"
if command -v ncu >/dev/null; then
  while IFS='|' read -r name envs shape cfg; do
    [[ -z "$name" ]] && continue
    timeout 60 env $envs ncu --metrics gpu__time_duration.sum -k regex:split_k --launch-count 12 --csv "$b" --rows skinny --only $shape --config $cfg --reps 1 > "$out/ncu_$name.csv" 2> "$out/ncu_$name.err"
    durs "$name" "$out/ncu_$name.csv"
  done <<'NCU'
16_s8|CTILE_X=0|16x2560x4096|16x64x64
16_s8_lp3|CTILE_LOOP_PREFETCH=3|16x2560x4096|16x64x64
16_s8_st2|CTILE_STAGES=2|16x2560x4096|16x64x64
128_s4_st2|CTILE_STAGES=2|128x2560x4096|64x64x128
NCU
fi
echo "ncu done at $((SECONDS-t0))s"
tar -czf "$out/records.tar.gz" -C "$out" $(cd "$out" && ls *.jsonl *.log *.csv *.err 2>/dev/null) 2>/dev/null; rm -f "$out"/*.log "$out"/*.jsonl "$out"/*.csv "$out"/*.err
echo "all done at $((SECONDS-t0))s"
