#!/usr/bin/env bash
# ncu profile of one row kernel, ctile's and the Triton peer's, on a GPU machine: ctile_bench --only
# KERNEL --reps 1 (the compiler's configuration; every call of each shape profiled) and the peer's
# kernel at each num_warps (bench/row_profile_triton.py), with the SpeedOfLight, Occupancy,
# LaunchStats and WarpStateStats sections and the warp stall reasons per issued instruction. Writes ${OUT:-results/row-profile}/{ctile,triton}.ncu.txt
# and a table of duration, registers, achieved occupancy and the top stall reasons per kernel and
# shape (bench/row_profile.py). Environment: OUT, KERNEL (default layer_norm), SHAPES (both sides), WARPS,
# BUILD (the build folder, default build/gpu).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-$root/results/row-profile}"
mkdir -p "$out"
kernel="${KERNEL:-layer_norm}"
build="${BUILD:-build/gpu}"
if [[ ! -x $build/bench/ctile_bench ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_TESTS=OFF -DCTILE_BUILD_EXAMPLES=OFF >"$out/build.log" 2>&1
fi
cmake --build "$build" -j "$(nproc)" --target ctile_bench >>"$out/build.log" 2>&1 || { echo "build failed"; tail -30 "$out/build.log"; exit 1; }
stalls=""
for r in barrier long_scoreboard short_scoreboard wait mio_throttle lg_throttle math_pipe_throttle not_selected membar; do
  stalls+="${stalls:+,}smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
done
sections=(--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --metrics "$stalls")
export CTILE_CACHE_DIR="$out/kernel-cache"
ncu "${sections[@]}" -k "regex:${kernel}" "$build/bench/ctile_bench" --only "$kernel" --reps 1 ${SHAPES:+--shapes "$SHAPES"} >"$out/ctile.ncu.txt" 2>&1
echo "ncu ctile exit $?"
TRITON_CACHE_DIR="$out/triton-cache" ncu "${sections[@]}" -k "regex:t_${kernel}" python3 bench/row_profile_triton.py "$kernel" \
  ${SHAPES:+--shapes "$SHAPES"} ${WARPS:+--warps "$WARPS"} >"$out/triton.ncu.txt" 2>&1
echo "ncu triton exit $?"
rm -rf "$CTILE_CACHE_DIR" "$out/triton-cache"
python3 bench/row_profile.py "$out/ctile.ncu.txt" "$out/triton.ncu.txt" | tee "$out/row_profile.md"
