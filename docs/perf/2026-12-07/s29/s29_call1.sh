#!/usr/bin/env bash
# Session 29, call 1: LayerNorm with the loads that only follow the reductions (w, b) deferred past
# them (experiment CTILE_DEFER_LOADS=1 in the schedule pass) and with the occupancy pass's allowance
# for temporaries changed (experiment CTILE_OCC_EXTRA), at the benchmark's six shapes and 4096x8192,
# then the peers of the two shapes furthest behind.
#   A: today's compiler (80 registers, 3 CTAs of 256 threads at 8192x5120)
#   B: deferred, today's allowance (48 registers, 5 CTAs, 248 bytes of spills)
#   C: deferred, allowance 48 (64 registers, 4 CTAs, no spills)
#   D: not deferred, allowance 16 (64 registers, 4 CTAs, 44 bytes of spills)
t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(cmake -S . -B build/s29 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_TESTS=OFF -DCTILE_BUILD_EXAMPLES=OFF \
   -DCTILE_BUILD_TOOL=OFF && cmake --build build/s29 -j "$(nproc)" --target ctile_bench) > "$OUT/build.log" 2>&1 \
  || { tail -20 "$OUT/build.log"; exit 1; }
echo "built at $((SECONDS-t0))s"
shapes=16384x1024,8192x4096,4096x16384,32768x1000,8192x5120,1024x32768,4096x8192
run() {  # run LABEL DEFER EXTRA
  CTILE_CACHE_DIR=build/cache_$1 CTILE_DEFER_LOADS=$2 CTILE_OCC_EXTRA=$3 timeout 110 build/s29/bench/ctile_bench \
    --only layer_norm --shapes $shapes --out "$OUT/ln_$1.jsonl" > "$OUT/ln_$1.log" 2>&1
  echo "$1 exit $? at $((SECONDS-t0))s"
}
run A 0 32
run B 1 32
run C 1 48
run D 0 16
timeout 150 python3 bench/peers.py --only rows --shapes 8192x5120,4096x16384 --out "$OUT/peers.jsonl" > "$OUT/peers.log" 2>&1
echo "peers exit $? at $((SECONDS-t0))s"
python3 bench/row_ab.py A="$OUT/ln_A.jsonl" B="$OUT/ln_B.jsonl" C="$OUT/ln_C.jsonl" D="$OUT/ln_D.jsonl" \
  --peers "$OUT/peers.jsonl" | tee "$OUT/ab.md"
