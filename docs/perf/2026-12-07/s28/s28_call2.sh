#!/usr/bin/env bash
# Session 28, call 2 (the rest of the session's device time): the row kernels at the compiler's
# choice of threads (32 elements a thread: 4 vector groups of 8 bf16) and at 64 elements a thread
# (half the warps), at the six standard shapes and 4096x8192 (an unmasked tile of 8192), to decide
# the layout pass's rule. Call 1 measured LayerNorm alone: 64 elements a thread won at 4096x16384
# (2.71 against 2.60 TB/s) and 8192x5120 (2.29 against 2.00), lost at the smaller tiles.
t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(cmake -S . -B build/ab_new -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_TESTS=OFF -DCTILE_BUILD_EXAMPLES=OFF \
   -DCTILE_BUILD_TOOL=OFF && cmake --build build/ab_new -j "$(nproc)" --target ctile_bench) > "$OUT/build.log" 2>&1 \
  || { tail -20 "$OUT/build.log"; exit 1; }
echo "built at $((SECONDS-t0))s"
CTILE_CACHE_DIR=build/cache_new timeout 170 build/ab_new/bench/ctile_bench --only layer_norm,rms_norm,softmax \
  --shapes 16384x1024,8192x4096,4096x16384,32768x1000,8192x5120,1024x32768,4096x8192 --configs 0:0,e64:0 \
  --out "$OUT/configs.jsonl" > "$OUT/configs.log" 2>&1
echo "configs exit $? at $((SECONDS-t0))s"
python3 bench/row_configs.py "$OUT/configs.jsonl" | tee "$OUT/configs.md"
