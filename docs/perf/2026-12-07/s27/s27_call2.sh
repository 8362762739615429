#!/usr/bin/env bash
# Session 27, call 2 (lazy completion events too): the GPU suites with compute-sanitizer
# again after the alignment fix (call 1
# found the split-K sum storing misaligned 16-byte vectors into a bf16 C of 300 columns: the code
# generator took 1-row pieces for aligned whatever the row stride), then issue 9's launch rows, eight
# rounds on the driver and four on the null driver (ctile's own host cost on this host's CPU).
t0=$SECONDS
SKIP_BENCH=1 SANITIZE=1 CTILE_COMMIT=${CTILE_COMMIT:-unknown} scripts/gpu_all.sh > "$OUT/gpu_all.log" 2>&1
tail -22 "$OUT/gpu_all.log"
echo "suites done at $((SECONDS-t0))s"
b=build/gpu
cmake --build $b --target ctile_launch_overhead ctile_null_cuda -j "$(nproc)" > "$OUT/build_launch.log" 2>&1 || tail -20 "$OUT/build_launch.log"
lo="$b/bench/ctile_launch_overhead"
null="$b/bench/libnull_cuda.so"
echo "launch bench built at $((SECONDS-t0))s"
mkdir -p "$OUT/launch"
for i in 1 2 3 4 5 6 7 8; do
  timeout 20 "$lo" --only enqueue,bound,sync --out "$OUT/launch/launch_$i.jsonl" > "$OUT/launch/launch_$i.log" 2>&1
  grep -E "^# (cached|pre-bound|launch \+ sync)" "$OUT/launch/launch_$i.log" | sed 's/(target.*//' | tr '\n' ' '; echo
done
for i in 1 2 3 4; do
  CTILE_LIBCUDA="$null" NULL_CUDA_KERNEL_US=3 timeout 20 "$lo" --only enqueue,bound,sync --out "$OUT/launch/null_$i.jsonl" > "$OUT/launch/null_$i.log" 2>&1
  echo -n "null: "; grep -E "^# (cached|pre-bound|launch \+ sync)" "$OUT/launch/null_$i.log" | sed 's/(target.*//' | tr '\n' ' '; echo
done
echo "launch done at $((SECONDS-t0))s"
cd "$OUT" && tar czf launch.tar.gz launch && rm -rf launch
