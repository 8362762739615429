#!/usr/bin/env bash
# Session 29, call 2 (the session's last device time): (a) LayerNorm with narrow-index's floored
# iota and branch-free selects (6ed2f86) against 50afc53 (`git archive 50afc53` in ab_base/,
# untracked, deleted after the run); (b) the row kernels with the option stages = 2 (a resident
# grid, block-prefetch loading each CTA's next row during this one) beside the default, at the
# shapes furthest from the peers.
t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_TESTS=OFF -DCTILE_BUILD_EXAMPLES=OFF -DCTILE_BUILD_TOOL=OFF)
j=$(( $(nproc) / 2 ))
(cmake -S . -B build/ab_new "${cfg[@]}" && cmake --build build/ab_new -j $j --target ctile_bench) > "$OUT/build_new.log" 2>&1 &
(cmake -S ab_base -B build/ab_old "${cfg[@]}" && cmake --build build/ab_old -j $j --target ctile_bench) > "$OUT/build_old.log" 2>&1 &
wait
for t in new old; do [[ -x build/ab_$t/bench/ctile_bench ]] || { echo "build $t failed"; tail -20 "$OUT/build_$t.log"; exit 1; }; done
echo "built at $((SECONDS-t0))s"
for run in old new; do
  CTILE_CACHE_DIR="build/cache_$run" timeout 40 build/ab_$run/bench/ctile_bench --only layer_norm \
    --shapes 8192x5120,8192x4096 --out "$OUT/ln_$run.jsonl" > "$OUT/ln_$run.log" 2>&1
  echo "ln $run exit $? at $((SECONDS-t0))s"
done
python3 bench/row_ab.py old="$OUT/ln_old.jsonl" new="$OUT/ln_new.jsonl" | tee "$OUT/ab.md"
CTILE_CACHE_DIR=build/cache_new timeout 150 build/ab_new/bench/ctile_bench --only layer_norm,rms_norm,softmax \
  --shapes 8192x5120,1024x32768,4096x16384 --configs 0:0,0:0:2 --out "$OUT/stages.jsonl" > "$OUT/stages.log" 2>&1
echo "stages exit $? at $((SECONDS-t0))s"
python3 bench/row_configs.py "$OUT/stages.jsonl" | tee "$OUT/stages.md"
echo "done at $((SECONDS-t0))s"
