#!/usr/bin/env bash
# Session 30, call 3: LayerNorm and RMSNorm with and without the remat pass (which re-derives
# x - mean from the bf16 registers at the output instead of keeping it in f32 registers; PTX
# 1078 -> 860 instructions without it, 80 -> 120 registers at 8192x5120), and without it under
# min_ctas 3 (80 registers, 40 B of spills), beside the peers.
t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(cmake -S . -B build/s30 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_TESTS=OFF -DCTILE_BUILD_EXAMPLES=OFF \
   -DCTILE_BUILD_TOOL=OFF && cmake --build build/s30 -j "$(nproc)" --target ctile_bench) > "$OUT/build.log" 2>&1 \
  || { tail -20 "$OUT/build.log"; exit 1; }
echo "built at $((SECONDS-t0))s"
shapes=8192x5120,8192x4096,4096x16384,1024x32768,16384x1024
run() {  # run LABEL KERNELS SKIP CONFIGS
  CTILE_CACHE_DIR=build/cache_$1 CTILE_SKIP_PASSES=$3 timeout 150 build/s30/bench/ctile_bench \
    --only $2 --shapes $shapes --configs $4 --out "$OUT/rows_$1.jsonl" > "$OUT/rows_$1.log" 2>&1
  echo "$1 exit $? at $((SECONDS-t0))s"
}
run A layer_norm,rms_norm "" 0:0
run B layer_norm,rms_norm remat 0:0
run C layer_norm remat 0:3
timeout 150 python3 bench/peers.py --only rows --shapes $shapes --out "$OUT/peers.jsonl" > "$OUT/peers.log" 2>&1
echo "peers exit $? at $((SECONDS-t0))s"
python3 bench/row_ab.py A="$OUT/rows_A.jsonl" B="$OUT/rows_B.jsonl" C="$OUT/rows_C.jsonl" \
  --peers "$OUT/peers.jsonl" | tee "$OUT/ab.md"
