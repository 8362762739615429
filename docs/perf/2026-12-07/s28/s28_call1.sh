#!/usr/bin/env bash
# Session 28, call 1: the row kernels with the warps left for a row on its lowest bits above the
# lanes (src/ir/layout.cpp blocked()) against the same kernels at 13e16ce (warps on the row's top
# bits: a row of 5120 columns in a tile of 8192 left 3 of 8 warps masked whole), both builds'
# ctile_bench in one run (old, new, old, new), then the peers (torch, torch.compile, autotuned Triton).
# The old tree is `git archive 13e16ce` unpacked in ab_base/ (untracked, deleted after the run).
t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_TESTS=OFF -DCTILE_BUILD_EXAMPLES=OFF -DCTILE_BUILD_TOOL=OFF)
j=$(( $(nproc) / 2 ))
(cmake -S . -B build/ab_new "${cfg[@]}" && cmake --build build/ab_new -j $j --target ctile_bench) > "$OUT/build_new.log" 2>&1 &
(cmake -S ab_base -B build/ab_old "${cfg[@]}" && cmake --build build/ab_old -j $j --target ctile_bench) > "$OUT/build_old.log" 2>&1 &
wait
for t in new old; do [[ -x build/ab_$t/bench/ctile_bench ]] || { echo "build $t failed"; tail -20 "$OUT/build_$t.log"; exit 1; }; done
echo "built at $((SECONDS-t0))s"
kernels=layer_norm,rms_norm,softmax,add_rms_norm,add,saxpy
for run in old new old2 new2; do
  t=${run%2}
  CTILE_CACHE_DIR="build/cache_$t" timeout 150 build/ab_$t/bench/ctile_bench --only $kernels --out "$OUT/$run.jsonl" > "$OUT/$run.log" 2>&1
  echo "$run exit $? at $((SECONDS-t0))s"
done
# The new layout at other thread counts (eN: N elements a thread), the row kernels only.
(( SECONDS - t0 < 330 )) && CTILE_CACHE_DIR=build/cache_new timeout 120 build/ab_new/bench/ctile_bench --only layer_norm,rms_norm,softmax \
  --configs 0:0,e32:0,e16:0,e8:0 --out "$OUT/configs.jsonl" > "$OUT/configs.log" 2>&1
echo "configs exit $? at $((SECONDS-t0))s"
left=$(( 530 - (SECONDS - t0) )); (( left > 170 )) && left=170; (( left < 30 )) && left=30
PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=build/triton-cache timeout 190 python3 bench/peers.py --only rows --out "$OUT/peers.jsonl" \
  --ctile-results "$OUT/new.jsonl" --deadline "$(( $(date +%s) + left ))" > "$OUT/peers.log" 2>&1
echo "peers exit $? at $((SECONDS-t0))s"
python3 bench/row_ab.py old="$OUT/old.jsonl" new="$OUT/new.jsonl" --peers "$OUT/peers.jsonl" | tee "$OUT/ab.md"
python3 bench/row_ab.py old="$OUT/old2.jsonl" new="$OUT/new2.jsonl" --peers "$OUT/peers.jsonl" | tee "$OUT/ab2.md"
python3 bench/row_configs.py "$OUT/configs.jsonl" "$OUT/peers.jsonl" | tee "$OUT/configs.md"
echo "done at $((SECONDS-t0))s"
