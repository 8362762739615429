#!/usr/bin/env bash
# Session 25, the short call (what is left of the device time after the pool's refusals): the K
# split with its 6 ring slots and with 4, the compiler's defaults and cuBLAS at the decode shapes;
# then issue 9's launch rows with the paced completer (CTILE_COMPLETER_PACE_US=50, the default) and
# without it (=0), in turns.
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
shapes=128x2560x4096,16x2560x4096,128x6144x2560,128x4096x12288
timeout 50 env CTILE_ACC_SPLIT=2 "$b" --rows skinny --only $shapes --config 64x64x128 --reps 10 --out "$out/ks6.jsonl" > "$out/ks6.log" 2>&1
show ksplit_slots6 "$out/ks6.jsonl"
timeout 50 "$b" --rows skinny --only $shapes --config 64x64x128,64x128x128 --reps 10 --out "$out/def.jsonl" > "$out/def.log" 2>&1
show default "$out/def.jsonl"
timeout 40 python3 bench/gemm/peers.py --kernels skinny --impls torch --only $shapes --out "$out/peers.jsonl" > "$out/peers.log" 2>&1
python3 -c "import json,sys; [print('cublas', r.get('shape'), round(r['ms']*1e3,1), 'us') for r in map(json.loads, open(sys.argv[1])) if r.get('ok')]" "$out/peers.jsonl"
echo "rows done at $((SECONDS-t0))s"
wait
lo="$build/bench/ctile_launch_overhead"
for pace in 50 0 50 0; do
  timeout 30 env CTILE_COMPLETER_PACE_US=$pace "$lo" --only enqueue,bound,sync --out "$out/launch.jsonl" > "$out/launch_pace$pace.log" 2>&1
  echo "pace $pace:"; python3 -c "import json,sys; [print(' ', r['impl'], r['what'], r['us']) for r in map(json.loads, open(sys.argv[1])) if r.get('impl') in ('raw','raw_ctile_calls','ctile','bound')]" "$out/launch.jsonl"
  mv "$out/launch.jsonl" "$out/launch_pace${pace}_$SECONDS.jsonl"
done
echo "launch done at $((SECONDS-t0))s"
timeout 50 env CTILE_ACC_SPLIT=2 CTILE_RING_SLOTS=4 "$b" --rows skinny --only $shapes --config 64x64x128 --reps 10 --out "$out/ks4.jsonl" > "$out/ks4.log" 2>&1
show ksplit_slots4 "$out/ks4.jsonl"
tar -czf "$out/records.tar.gz" -C "$out" $(cd "$out" && ls *.jsonl *.log) 2>/dev/null; rm -f "$out"/*.log "$out"/*.jsonl
echo "all done at $((SECONDS-t0))s"
