#!/usr/bin/env bash
# Session 30, call 4: LayerNorm in Triton's shape: x - mean kept in f32 registers (no remat) and
# w, b loaded after the two reductions where the kernel loads them (no schedule pass), at the
# compiler's occupancy (64 registers, 76 B of spills at 8192x5120), at min_ctas 3 (79, none) and
# with 16 warps (56 registers; Triton's autotuned LayerNorm runs 16 warps at 64 registers there),
# beside today's compiler (window bounds in 32 bits) with 8 and 16 warps; and 32 warps for the
# 16K- and 32K-wide rows (16 warps there: 128 registers, one CTA of 16 warps an SM).
t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(cmake -S . -B build/s30 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_TESTS=OFF -DCTILE_BUILD_EXAMPLES=OFF \
   -DCTILE_BUILD_TOOL=OFF && cmake --build build/s30 -j "$(nproc)" --target ctile_bench) > "$OUT/build.log" 2>&1 \
  || { tail -20 "$OUT/build.log"; exit 1; }
echo "built at $((SECONDS-t0))s"
run() {  # run LABEL SKIP KERNELS SHAPES CONFIGS
  CTILE_CACHE_DIR=build/cache_$1 CTILE_SKIP_PASSES=$2 timeout 100 build/s30/bench/ctile_bench \
    --only $3 --shapes $4 --configs $5 --out "$OUT/rows_$1.jsonl" > "$OUT/rows_$1.log" 2>&1
  echo "$1 exit $? at $((SECONDS-t0))s"
  python3 bench/row_configs.py "$OUT/rows_$1.jsonl" | tee "$OUT/rows_$1.md"
}
run A "" layer_norm 8192x5120,8192x4096,16384x1024,4096x16384,1024x32768 0:0,16:0
run W "" layer_norm,rms_norm 4096x16384,1024x32768 0:0,32:0
run D remat,schedule layer_norm 8192x5120,8192x4096,16384x1024 0:0,0:3,16:0
run R remat layer_norm 8192x5120 0:0,16:0
echo "done at $((SECONDS-t0))s"
