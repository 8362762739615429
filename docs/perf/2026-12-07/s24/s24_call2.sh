#!/usr/bin/env bash
# Session 24, call 2: the lean consumer loop (wgmma descriptors as one add a step, slots from
# 32-bit offsets, shared addresses through the compiler's own conversion, one arrival a released
# slot) at the decode shapes and at 4096^3, cuBLAS in the same call; then the ncu source counters
# of the 64 x 64 x 128 TMA kernel at 128x2560x4096 (where the consumers wait now).
source bench/gemm/common.sh
t0=$SECONDS
build_gemm_bench "$out/build.log" || exit 1
echo "built at $((SECONDS-t0))s"
export CTILE_CACHE_DIR="$build/kernel-cache"
b="$build/bench/ctile_gemm_bench"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
show() {  # show LABEL FILE.jsonl: each row, its shape, configuration and time (or its error)
  python3 -c "import json,sys; [print(sys.argv[1], r['shape'], r['config'], round(r['ms']*1e3,1) if r.get('ok') else r.get('error','')[:160], 'us') for r in map(json.loads, open(sys.argv[2]))]" "$1" "$2"
}
shapes=128x2560x4096,16x2560x4096,128x6144x2560,128x4096x12288
timeout 90 python3 bench/gemm/peers.py --kernels skinny,matmul --impls torch --only $shapes,4096x4096x4096 --out "$out/peers.jsonl" > "$out/peers.log" 2>&1
python3 -c "import json,sys; [print('cublas', r.get('shape'), round(r['ms']*1e3,1), 'us', round(r.get('tflops',0),1), 'TF') for r in map(json.loads, open(sys.argv[1])) if r.get('ok')]" "$out/peers.jsonl"
timeout 120 env CTILE_TMA=1 "$b" --rows skinny --only $shapes --config 64x64x64,64x64x128,64x64x256,64x128x128 --reps 30 --out "$out/tma.jsonl" > "$out/tma.log" 2>&1
show tma "$out/tma.jsonl"
echo "tma done at $((SECONDS-t0))s"
timeout 60 "$b" --rows skinny --only $shapes --config 64x64x128,64x128x128 --reps 30 --out "$out/cpa.jsonl" > "$out/cpa.log" 2>&1
show default "$out/cpa.jsonl"
timeout 90 "$b" --rows shapes --only 4096x4096x4096 --config 128x128x64,128x256x64 --reps 20 --out "$out/big.jsonl" > "$out/big.log" 2>&1
python3 -c "import json,sys; [print('big', r['shape'], r['config'], round(r.get('tflops',0),1) if r.get('ok') else r.get('error','')[:160], 'TF') for r in map(json.loads, open(sys.argv[1]))]" "$out/big.jsonl"
echo "bench done at $((SECONDS-t0))s"
timeout 100 env CTILE_TMA=1 ncu --section SourceCounters --section WarpStateStats --section SpeedOfLight -k regex:bench__matmul --launch-skip 3 --launch-count 1 \
  -o "$out/tma128" "$b" --rows skinny --only 128x2560x4096 --config 64x64x128 --reps 3 > "$out/ncu.log" 2>&1
echo "ncu rc $? at $((SECONDS-t0))s"
ncu -i "$out/tma128.ncu-rep" --page source --csv --print-source sass > "$out/sass.csv" 2>"$out/sass.err"
ncu -i "$out/tma128.ncu-rep" --page details > "$out/details.txt" 2>&1
grep -E "Duration|DRAM Throughput|Issued Warp|No Eligible" "$out/details.txt" | head
tar -czf "$out/records.tar.gz" -C "$out" sass.csv details.txt ncu.log peers.jsonl peers.log tma.jsonl tma.log cpa.jsonl cpa.log big.jsonl big.log 2>/dev/null
rm -f "$out"/sass.csv "$out"/*.log "$out"/*.jsonl "$out"/details.txt "$out"/*.ncu-rep
echo "all done at $((SECONDS-t0))s"
