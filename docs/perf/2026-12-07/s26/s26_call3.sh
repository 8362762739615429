#!/usr/bin/env bash
# Session 26, call 3: the GPU suites at this commit (the split-K kernels and the bound launch's
# fast path on the hardware; the split-K and bind tests on the GPU), then ncu's full set over the
# 64-row split-K partial product and the plain 64 x 64 x 128 kernel at 128x2560x4096 (why a split
# K step costs twice the plain one's).
t0=$SECONDS
SKIP_BENCH=1 SANITIZE=0 CTILE_COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown) scripts/gpu_all.sh > "$OUT/gpu_all.log" 2>&1
tail -15 "$OUT/gpu_all.log"
echo "suites done at $((SECONDS-t0))s"
( cd build/gpu-all/tests && timeout 120 ctest -R "MatmulSplitK|Bind\.|LaunchStress" --output-on-failure > "$OUT/ctest_splitk_bind.log" 2>&1; tail -3 "$OUT/ctest_splitk_bind.log" )
source bench/gemm/common.sh
build_gemm_bench "$out/build.log" || exit 1
export CTILE_CACHE_DIR="$build/kernel-cache"
b="$build/bench/ctile_gemm_bench"
echo "bench built at $((SECONDS-t0))s"
if command -v ncu >/dev/null; then
  "$b" --rows skinny --only 128x2560x4096 --config 64x64x128 --reps 1 > /dev/null 2>&1  # warm the kernel cache
  timeout 150 ncu --set full -k regex:matmul --launch-skip 4 --launch-count 1 -o "$OUT/plain" "$b" --rows skinny --only 128x2560x4096 --config 64x64x128 --reps 1 > "$OUT/ncu_plain.log" 2>&1
  echo "ncu plain rc $? at $((SECONDS-t0))s"
  timeout 150 ncu --set full -k regex:partial --launch-skip 2 --launch-count 1 -o "$OUT/split" "$b" --rows skinny --only 128x2560x4096 --config 64x64x128 --reps 1 > "$OUT/ncu_split.log" 2>&1
  echo "ncu split rc $? at $((SECONDS-t0))s"
  for r in plain split; do
    [[ -f "$OUT/$r.ncu-rep" ]] && ncu --import "$OUT/$r.ncu-rep" --page details > "$OUT/${r}_details.txt" 2>&1
  done
  grep -E "^  [a-z_]|Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Hit|L2 Hit|Memory Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size|Dynamic Shared|Waves Per SM|Compute \(SM\) Throughput|lts__t_bytes|Theoretical Occupancy" "$OUT"/*_details.txt | head -60
fi
cd "$OUT" && tar czf ncu.tar.gz *.ncu-rep *_details.txt ncu_*.log 2>/dev/null && rm -f *.ncu-rep
echo "all done at $((SECONDS-t0))s"
