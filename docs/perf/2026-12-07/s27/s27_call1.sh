#!/usr/bin/env bash
# Session 27, call 1: the GPU suites with compute-sanitizer (memcheck with stream-ordered race
# tracking, racecheck) at this commit: the synced launch finished on the calling thread (ffe2d73)
# and session 26's split-K GPU test on the hardware for the first time; then issue 9's launch rows,
# eight rounds, raw and ctile in each.
t0=$SECONDS
SKIP_BENCH=1 SANITIZE=1 CTILE_COMMIT=ffe2d73 scripts/gpu_all.sh > "$OUT/gpu_all.log" 2>&1
tail -22 "$OUT/gpu_all.log"
cp build/gpu-all/tests/gpu_summary.txt "$OUT/" 2>/dev/null || true
echo "suites done at $((SECONDS-t0))s"
cmake --build build/gpu-all --target ctile_launch_overhead -j "$(nproc)" > "$OUT/build_launch.log" 2>&1 || tail -20 "$OUT/build_launch.log"
lo="$(find build/gpu-all -name ctile_launch_overhead -type f | head -1)"
echo "launch bench: $lo at $((SECONDS-t0))s"
mkdir -p "$OUT/launch"
for i in 1 2 3 4 5 6 7 8; do
  timeout 20 "$lo" --only enqueue,bound,sync --out "$OUT/launch/launch_$i.jsonl" > "$OUT/launch/launch_$i.log" 2>&1
  grep -E "^# (cached|pre-bound|launch \+ sync)" "$OUT/launch/launch_$i.log" | sed 's/(target.*//' | tr '\n' ' '; echo
done
echo "launch done at $((SECONDS-t0))s"
cd "$OUT" && tar czf launch.tar.gz launch && rm -rf launch
