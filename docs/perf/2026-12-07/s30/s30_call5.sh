#!/usr/bin/env bash
# Session 30, call 5: where LayerNorm 8192x5120 spends its instructions. ncu's SourceCounters per
# SASS instruction (executed warp instructions, stall samples) for one launch of ctile's kernel
# (the tree) and of Triton's at 8 warps, exported as CSV (--page source --print-source sass).
t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(cmake -S . -B build/s30 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_TESTS=OFF -DCTILE_BUILD_EXAMPLES=OFF \
   -DCTILE_BUILD_TOOL=OFF && cmake --build build/s30 -j "$(nproc)" --target ctile_bench) > "$OUT/build.log" 2>&1 \
  || { tail -20 "$OUT/build.log"; exit 1; }
echo "built at $((SECONDS-t0))s"
sec=(--section SourceCounters --section WarpStateStats --metrics smsp__inst_executed.sum,gpu__time_duration.sum)
CTILE_CACHE_DIR=build/cache_p timeout 120 ncu "${sec[@]}" -k regex:layer_norm --launch-skip 2 --launch-count 1 \
  --page source --print-source sass --csv build/s30/bench/ctile_bench --only layer_norm --reps 1 --shapes 8192x5120 \
  > "$OUT/ctile_src.csv" 2> "$OUT/ctile_src.err"
echo "ncu ctile exit $? at $((SECONDS-t0))s"
TRITON_CACHE_DIR=build/tcache timeout 120 ncu "${sec[@]}" -k regex:t_layer_norm --launch-skip 1 --launch-count 1 \
  --page source --print-source sass --csv python3 bench/row_profile_triton.py layer_norm --shapes 8192x5120 --warps 8 \
  > "$OUT/triton_src.csv" 2> "$OUT/triton_src.err"
echo "ncu triton exit $? at $((SECONDS-t0))s"
gzip -9 "$OUT"/*.csv
ls -la "$OUT"
