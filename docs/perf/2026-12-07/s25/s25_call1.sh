#!/usr/bin/env bash
# Session 25, call 1: (1) the K split (acc_split = 2: a second consumer warpgroup takes the odd K
# steps of a 64-row tile) beside the compiler's defaults (TMA and the producer for a GEMM's 64-row K
# loop) at the decode shapes, cuBLAS in the same call; (2) issue 9: the launch-overhead rows with the
# paced completer (CTILE_COMPLETER_PACE_US default 50) and without it (=0, the previous design), in
# turns, twice; (3) the GPU suites (tests/gpu, cuda_codegen_gpu with the k_split catalogue cases)
# with what is left of ~575 s.
t0=$SECONDS
source bench/gemm/common.sh
build_gemm_bench "$out/build.log" || exit 1
echo "built at $((SECONDS-t0))s"
export CTILE_CACHE_DIR="$build/kernel-cache"
b="$build/bench/ctile_gemm_bench"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc
show() {  # show LABEL FILE.jsonl: each row, its shape, configuration and time (or its error)
  python3 -c "import json,sys; [print(sys.argv[1], r['shape'], r['config'], round(r['ms']*1e3,1) if r.get('ok') else r.get('error','')[:160], 'us') for r in map(json.loads, open(sys.argv[2]))]" "$1" "$2"
}
shapes=128x2560x4096,16x2560x4096,128x6144x2560,128x4096x12288
# Two consumer warpgroups each hold two slots (one product in flight, one being issued): with
# smem-alloc's 4 slots the producer has none to run ahead into, so the split grows the rings to 6
# (acc-split, kKSplitSlots); measured here with 4 (CTILE_RING_SLOTS=4), its 6, and 8 of the
# 64-deep steps, beside one warpgroup with the same 6.
timeout 60 env CTILE_ACC_SPLIT=2 CTILE_RING_SLOTS=4 "$b" --rows skinny --only $shapes --config 64x64x128 --reps 15 --out "$out/ks.jsonl" > "$out/ks.log" 2>&1
show ksplit_slots4 "$out/ks.jsonl"
timeout 60 env CTILE_ACC_SPLIT=2 "$b" --rows skinny --only $shapes --config 64x64x128 --reps 15 --out "$out/ks6.jsonl" > "$out/ks6.log" 2>&1
show ksplit_slots6 "$out/ks6.jsonl"
timeout 60 env CTILE_ACC_SPLIT=2 CTILE_RING_SLOTS=8 "$b" --rows skinny --only $shapes --config 64x64x64 --reps 15 --out "$out/ks8.jsonl" > "$out/ks8.log" 2>&1
show ksplit_slots8 "$out/ks8.jsonl"
timeout 60 env CTILE_RING_SLOTS=6 "$b" --rows skinny --only $shapes --config 64x64x128 --reps 15 --out "$out/one6.jsonl" > "$out/one6.log" 2>&1
show one_wg_slots6 "$out/one6.jsonl"
echo "ksplit done at $((SECONDS-t0))s"
timeout 70 "$b" --rows skinny --only $shapes --config 64x64x128,64x64x256,128x64x128 --reps 15 --out "$out/def.jsonl" > "$out/def.log" 2>&1
show default "$out/def.jsonl"
timeout 40 python3 bench/gemm/peers.py --kernels skinny --impls torch --only $shapes --out "$out/peers.jsonl" > "$out/peers.log" 2>&1
python3 -c "import json,sys; [print('cublas', r.get('shape'), round(r['ms']*1e3,1), 'us') for r in map(json.loads, open(sys.argv[1])) if r.get('ok')]" "$out/peers.jsonl"
echo "rows done at $((SECONDS-t0))s"
# issue 9
cmake --build "$build" --target ctile_launch_overhead -j "$(nproc)" > "$out/build_launch.log" 2>&1 || tail -20 "$out/build_launch.log"
lo="$build/bench/ctile_launch_overhead"
for round in 1 2; do
  for pace in 50 0; do
    timeout 40 env CTILE_COMPLETER_PACE_US=$pace "$lo" --only enqueue,bound,sync --out "$out/launch_pace$pace.jsonl" > "$out/launch_pace${pace}_$round.log" 2>&1
    echo "pace $pace round $round:"; grep -E "^(cached|pre-bound|launch \+ sync|  )" "$out/launch_pace${pace}_$round.log" | head -12
    python3 -c "import json,sys; [print(' ', r['impl'], r['what'], r['us']) for r in map(json.loads, open(sys.argv[1])) if r.get('impl') in ('raw','raw_ctile_calls','ctile','bound')]" "$out/launch_pace$pace.jsonl" | tail -6
    rm -f "$out/launch_pace$pace.jsonl"
  done
done
echo "launch done at $((SECONDS-t0))s"
tar -czf "$out/rows.tar.gz" -C "$out" ks.jsonl ks.log ks6.jsonl ks6.log ks8.jsonl ks8.log one6.jsonl one6.log def.jsonl def.log peers.jsonl peers.log $(cd "$out" && ls launch_pace*.log) 2>/dev/null; rm -f "$out"/*.log "$out"/*.jsonl
# the suites with what is left of CALL_S (default 575) s (cut off by timeout: a partial run says so in its log)
left=$((${CALL_S:-575} - (SECONDS-t0)))
[[ $left -gt 60 ]] || { echo "no time left for the suites"; exit 0; }
timeout $left env SKIP_BENCH=1 SANITIZE=0 BUDGET_S=$left bash scripts/gpu_all.sh > "$OUT/gpu_all.log" 2>&1
echo "gpu_all rc $? at $((SECONDS-t0))s"
tail -25 "$OUT/summary.txt" 2>/dev/null
grep -E "passed|failed|FAILED" "$OUT/gpu_summary.txt" 2>/dev/null | head -20
echo "all done at $((SECONDS-t0))s"
